// The egress proxy server: one listener (a Unix socket, or TCP on loopback), routed by
// the first byte a client sends: 0x05 SOCKS5, 0x04 SOCKS4 (refused, with a SOCKS4
// answer), anything else HTTP (CONNECT tunnels and absolute-form requests). Every
// request is decided by egress.h and reported through an EventSink.
//
// Threading: everything runs on ONE io_context, on whichever thread runs it. create(),
// listen*() and start() must be called before that io_context runs or from its thread;
// shutdown() and abort() may be called from any thread (they post). The EventSink is
// called on the io_context's thread.
//
// Ownership: the Server owns its listener and its connections. Connections keep the
// server's internals alive while their coroutines exist, so destroying the Server (or
// the io_context) with connections open is safe: they are aborted. The io_context must
// outlive the Server.
//
// File descriptors: every socket the proxy opens or accepts is CLOEXEC (and
// non-blocking) from birth, so a fork+exec elsewhere in the supervisor (bwrap) can never
// inherit one, even from another thread.
//
// Embedding in `vigil run` (sketch):
//   auto srv = proxy::Server::create(io, policy.net, options,
//                                    proxy::make_system_resolver(io.get_executor()), sink);
//   if (!srv) -> report srv.error() (Errc::kInvalidPolicy: a bad pattern or CIDR)
//   (*srv)->listen({ListenAddress::Kind::kUnix, session_dir + "/proxy.sock"});
//   (*srv)->start();
//   ... io.run() ...;  at the end of the session: (*srv)->shutdown();
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "proxy/ask.h"
#include "proxy/events.h"
#include "proxy/guard_inputs.h"
#include "proxy/http_head.h"
#include "proxy/resolver.h"
#include "proxy/tls_handoff.h"
#include "supervisor/core/policy/policy.h"
#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil::proxy {

struct ServerOptions {
  std::size_t max_head_bytes = http::kMaxHeadBytes;      // request head; 431 beyond
  std::chrono::milliseconds first_byte_timeout{10'000};  // accept -> first byte
  std::chrono::milliseconds head_timeout{30'000};     // first byte -> whole head / SOCKS handshake
  std::chrono::milliseconds resolve_timeout{10'000};  // one DNS lookup
  std::chrono::milliseconds connect_timeout{10'000};  // upstream TCP connect (all addresses)
  std::chrono::milliseconds idle_timeout{300'000};    // no byte either way on a tunnel / keep-alive
  std::chrono::milliseconds shutdown_grace{5'000};    // shutdown(): then everything is cut
  std::size_t max_connections = 4096;                 // client connections; accepting pauses beyond
  std::size_t buffer_bytes = 64 * 1024;  // per direction per connection (>= head limit)
  // Tunnels (CONNECT, SOCKS5) relay with splice(2) on Linux: the bytes never pass
  // through user space. false: through the connection's buffers (the relay other systems
  // use; tests run the tunnel cases both ways).
  bool splice_tunnels = true;
  // Test-only (address_guard.h: GuardContext::allow_loopback). The CLI sets it only
  // with --test-allow-loopback and VIGIL_TEST_MODE=1.
  bool test_allow_loopback = false;
  // Ask mode (proxy/ask.h): a host off the allow list is held while `asker` is asked,
  // denied after ask_timeout without an answer. None: refused at once.
  std::shared_ptr<Asker> asker;
  std::chrono::milliseconds ask_timeout{60'000};
  // Where the address guard learns this machine's addresses (guard_inputs.h); null =
  // getifaddrs. A seam for tests: a lister that fails must make the guard refuse.
  HostAddressLister host_addresses;
  // TLS termination (tls_handoff.h): which CONNECT tunnels go to vigil-tls. None: none.
  std::shared_ptr<TlsHandoff> tls;
  // network.refuseOpaqueTunnels: a tunnel the proxy cannot see into (not terminated, not
  // TLS, SOCKS) is refused.
  bool refuse_opaque_tunnels = false;
  // The capture listener (proxy/captured.h): its CONNECTs come from vigil-init on behalf
  // of a program that ignored the proxy settings; their decisions are marked captured.
  bool captured = false;
};

struct ListenAddress {
  enum class Kind { kUnix, kTcp };
  Kind kind = Kind::kUnix;
  std::string path;          // kUnix
  std::string host;          // kTcp: "127.0.0.1" or "::1"
  std::uint16_t port = 0;    // kTcp: 0 = any free port (see Server::local_address)
  std::string text() const;  // "unix:/path", "tcp:127.0.0.1:3128", "tcp:[::1]:3128"
};

// "unix:PATH" (absolute) or "tcp:127.0.0.1:PORT" / "tcp:[::1]:PORT". The proxy only ever
// listens on loopback: anything else is an error (Errc::kInvalidPolicy).
Result<ListenAddress> parse_listen_address(std::string_view text);

struct ServerStats {
  std::uint64_t accepted = 0;
  std::uint64_t active = 0;  // client connections open now
  std::uint64_t peak_active = 0;
  std::uint64_t allowed = 0;  // net.decision events, by verdict
  std::uint64_t denied = 0;
  std::uint64_t upstream_failures = 0;
  std::uint64_t bytes_up = 0;    // client -> upstream (bodies and tunnels)
  std::uint64_t bytes_down = 0;  // upstream -> client
};

class Server {
 public:
  // Compiles the allowlist (DomainMatcher::build) and network.deniedResolvedAddresses.
  // Errors are Errc::kInvalidPolicy with the JSON path of the entry. `resolver` and
  // `sink` must not be null.
  static Result<std::unique_ptr<Server>> create(boost::asio::io_context& io,
                                                const NetworkPolicy& net, ServerOptions options,
                                                std::shared_ptr<Resolver> resolver,
                                                std::shared_ptr<EventSink> sink);
  // Cuts every connection and removes the Unix socket. Call it on the io_context's
  // thread, or when the io_context is not running.
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and listens. A Unix socket is created mode 0600 (put it in a private
  // directory anyway: the mode is set after bind) and unlinked when the server stops; a
  // stale socket nobody listens on is replaced, anything else at the path is an error.
  Result<void> listen(const ListenAddress& where);
  // Adopts a socket that is already bound and listening (AF_UNIX, AF_INET or AF_INET6),
  // e.g. one created before the sandbox was launched. It is made CLOEXEC/non-blocking.
  Result<void> listen_fd(UniqueFd fd);
  // What listen() bound (the real port for tcp port 0).
  ListenAddress local_address() const;

  // Starts accepting. Call once, after listen*.
  void start();
  // Graceful: stop accepting, close idle connections (waiting for a first byte or
  // between keep-alive requests), let the others finish; after options.shutdown_grace
  // cut everything. A second call cuts at once. Thread-safe.
  void shutdown();
  // Cuts every connection now. Thread-safe.
  void abort();
  // Called once, on the io_context's thread, when the server has stopped: after
  // shutdown()/abort(), once the last connection closed or was cut. Coroutines parked on
  // a DNS answer (sockets already closed) may outlive this by up to resolve_timeout and
  // keep the io_context busy until then: stop it from here if you need run() to return.
  void on_stopped(std::function<void()> callback);

  // io_context thread only.
  ServerStats stats() const;

  class Impl;

 private:
  explicit Server(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace vigil::proxy
