// The sandbox's only way out: vigil-init listens on 127.0.0.1:3128 (HTTP proxy) and
// 127.0.0.1:1080 (SOCKS5) inside the sandbox's network namespace, and splices every
// accepted connection to the session's proxy Unix socket, which the supervisor
// bind-mounts in. The listeners are bound before the worker starts, so the command never
// races its own network, and nothing polls for them.
//
// Single-threaded, edge-free (level-triggered) epoll relay; every buffer is bounded, and
// a full buffer stops reading from the other side (back-pressure instead of growth).
// Lives in PID 1: no exceptions, errors are values.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "observer/capture_route.h"
#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil::init {

inline constexpr std::uint16_t kHttpProxyPort = 3128;
inline constexpr std::uint16_t kSocksProxyPort = 1080;
inline constexpr std::size_t kRelayBuffer = 64 * 1024;
inline constexpr std::size_t kMaxRelayedConnections = 512;

class Bridge {
 public:
  // One listener: 127.0.0.1:port inside the sandbox, spliced to the Unix socket `path`
  // (the session's proxy, or the relay to an external proxy the user runs:
  // network.httpProxyPort / socksProxyPort).
  struct Route {
    std::uint16_t port = 0;
    std::string path;
  };
  // Binds and listens on 127.0.0.1:port for each route. With `capture`
  // (vigil.network.capture), one more listener on a free loopback port (told to
  // `capture`), whose connections are the connect broker's: each is relayed to
  // capture->upstream() with the bytes it registered sent first, and a connection from a
  // port nobody registered is closed at once (observer/capture_route.h).
  // `address`: where the routes listen (an agent session's command: its own loopback
  // address in the session's shared namespace, supervisor/launch/session_netns.h). The
  // capture listener is always on 127.0.0.1 at a port the kernel picks.
  static Result<Bridge> listen(const std::vector<Route>& routes,
                               std::shared_ptr<CaptureRoute> capture = nullptr,
                               const std::string& address = "127.0.0.1");

  // Registers the listeners with `epoll_fd`. Call once.
  Result<void> attach(int epoll_fd);
  // Handles one epoll event whose data.u64 was set by this bridge. Returns false when the
  // event was not one of ours.
  bool handle(int epoll_fd, std::uint64_t tag, std::uint32_t events);

  Bridge(Bridge&&) noexcept;
  Bridge& operator=(Bridge&&) noexcept;
  ~Bridge();

 private:
  struct Relay;
  struct Pair;
  Bridge() = default;
  void accept_from(int epoll_fd, std::size_t index);
  void pump(int epoll_fd, Pair& p);
  void update_interest(int epoll_fd, Pair& p);

  std::vector<std::string> targets_;  // by listener index
  std::vector<UniqueFd> listeners_;
  std::map<std::uint64_t, std::unique_ptr<Pair>> pairs_;  // by id
  std::shared_ptr<CaptureRoute> capture_;                 // the last listener's, if any
  bool captured_listener(std::size_t index, int client, std::string* first);
  std::uint64_t next_id_ = 1;
};

// Tags in epoll_event.data.u64: high bit set for bridge events, so the init loop can tell
// them from its own (the signalfd).
inline constexpr std::uint64_t kBridgeTagBit = 1ULL << 63;

}  // namespace vigil::init
