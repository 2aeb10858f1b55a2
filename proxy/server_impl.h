// The server's internals, shared by the files that implement it: the listener and the
// connection set (server_impl.cc, listener.cc) and what every connection uses (connection*.cc).
// Not part of the proxy's interface: include proxy/server.h.
#pragma once

#include <sys/types.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/basic_socket_acceptor.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "proxy/buffer_pool.h"
#include "proxy/connection_handle.h"
#include "proxy/domain_matcher.h"
#include "proxy/guard_inputs.h"
#include "proxy/parent_proxy.h"
#include "proxy/server.h"
#include "proxy/splice_pipe.h"

namespace vigil::proxy {

namespace asio = boost::asio;
using GenericSocket = asio::generic::stream_protocol::socket;
using Clock = std::chrono::steady_clock;
using boost::system::error_code;

// GCC 12 miscompiles a co_await inside an if/while condition or a ?: (the frame is
// resumed in a bad state: SIGILL/SIGSEGV; reproduced in 20 lines, clang is fine). Every
// co_await in the server is therefore its own statement: `const bool ok = co_await ...;`.
inline constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);

// TCP_NODELAY on a proxied socket: heads and small bodies go out at once.
void set_nodelay(int fd);


class Server::Impl : public std::enable_shared_from_this<Server::Impl> {
 public:
  Impl(asio::io_context& io, DomainMatcher matcher, std::vector<AddressBlock> denied,
       ServerOptions options, std::shared_ptr<Resolver> resolver, std::shared_ptr<EventSink> sink,
       std::optional<ParentRoute> parent);

  Result<void> listen(const ListenAddress& where);
  Result<void> adopt(UniqueFd fd);
  void start();
  void begin_shutdown();
  void force_abort();
  void connection_finished(ConnectionHandle* c);

  // --- used by connections ---
  asio::io_context& io() { return io_; }
  const ServerOptions& options() const { return options_; }
  BufferCache* buffer_cache() { return &buffer_cache_; }
  PipePool& pipes() { return pipes_; }
  const DomainMatcher& matcher() const { return matcher_; }
  const std::optional<ParentRoute>& parent() const { return parent_; }
  const std::optional<MitmRoute>& mitm() const { return mitm_; }
  void set_mitm(std::optional<MitmRoute> m) { mitm_ = std::move(m); }
  Resolver& resolver() { return *resolver_; }
  void shutdown_resolver() { resolver_->shutdown(); }
  bool stopping() const { return stopping_; }
  ServerStats& stats() { return stats_; }
  void emit(const NetDecision& d) {
    ++(d.verdict == NetVerdict::kAllowed ? stats_.allowed : stats_.denied);
    sink_->on_decision(d);
  }
  void emit(const NetUpstreamFailure& f) {
    ++stats_.upstream_failures;
    sink_->on_upstream_failure(f);
  }
  // The guard's inputs as of now (guard_inputs.h: interface addresses refreshed at most
  // once a second; a failure to list them makes the guard refuse).
  const GuardContext& guard_context() { return guard_inputs_.current(); }
  // Waits (bounded) for the metadata.google.internal lookup started by the first connection.
  asio::awaitable<void> metadata_ready() { return guard_inputs_.metadata_ready(); }

  std::function<void()> on_stopped_;
  ListenAddress bound_;

 private:
  asio::awaitable<void> accept_loop();
  void check_stopped();
  void stop_listening();
  void spawn_connection(UniqueFd fd);

  asio::io_context& io_;
  DomainMatcher matcher_;
  std::optional<ParentRoute> parent_;  // network.parentProxy: allowed traffic goes through it
  std::optional<MitmRoute> mitm_;      // network.mitmProxy: its domains go to the user's proxy
  ServerOptions options_;
  std::shared_ptr<Resolver> resolver_;
  std::shared_ptr<EventSink> sink_;
  GuardInputs guard_inputs_;

  asio::basic_socket_acceptor<asio::generic::stream_protocol> acceptor_;
  asio::generic::stream_protocol protocol_{AF_UNIX, 0};
  std::string unix_path_;  // unlinked at stop, if it is still our socket
  dev_t unix_dev_ = 0;
  ino_t unix_ino_ = 0;

  std::unordered_set<ConnectionHandle*> connections_;
  asio::steady_timer slot_event_;  // cancelled when a connection slot frees up
  asio::steady_timer grace_timer_;
  asio::steady_timer trim_timer_;
  bool trim_pending_ = false;
  BufferCache buffer_cache_;
  PipePool pipes_;  // empty splice pipes between tunnels (splice_pipe.h)
  bool metadata_started_ = false;
  bool started_ = false;
  bool stopping_ = false;
  bool stopped_ = false;
  ServerStats stats_;
};

}  // namespace vigil::proxy
