// The proxy server's lifecycle: the accept loop (bounded by max_connections), the set of
// connections, idle trimming of buffers, graceful shutdown and abort, and the public
// Server facade. Connections are held by their handle (connection_handle.h); where the
// server listens, and the making of each Connection, is listener.cc.
#include "proxy/server_impl.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <exception>
#include <utility>

#include "proxy/connection_handle.h"

namespace vigil::proxy {

namespace {

// After the last connection closes and this much time passes with none open, the kept
// buffers are unmapped and the heap's free pages handed back to the OS (glibc keeps them
// otherwise: a burst of 1,500 connections would pin ~20 MB for the rest of the session).
constexpr std::chrono::milliseconds kTrimAfterIdle{1000};

}  // namespace

void set_nodelay(int fd) {
  const int one = 1;
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

Server::Impl::Impl(asio::io_context& io, DomainMatcher matcher, std::vector<AddressBlock> denied,
                   ServerOptions options, std::shared_ptr<Resolver> resolver,
                   std::shared_ptr<EventSink> sink, std::optional<ParentRoute> parent)
    : io_(io),
      matcher_(std::move(matcher)),
      parent_(std::move(parent)),
      options_(options),
      resolver_(std::move(resolver)),
      sink_(std::move(sink)),
      guard_inputs_(io, std::move(denied), options_.test_allow_loopback,
                    options_.host_addresses),
      acceptor_(io),
      slot_event_(io),
      grace_timer_(io),
      trim_timer_(io) {
  options_.buffer_bytes = std::max(options_.buffer_bytes, options_.max_head_bytes + 1);
  slot_event_.expires_at(Clock::time_point::max());
}

void Server::Impl::start() {
  if (started_) return;
  started_ = true;
  auto self = shared_from_this();
  // The metadata lookup waits for the first client (spawn_connection): most commands
  // never use the network, and a lookup at start cost every `vigil run` a thread and a
  // getaddrinfo (NSS modules, a DNS query) while the sandbox was starting.
  asio::co_spawn(io_, accept_loop(), [self](std::exception_ptr) {});
}

asio::awaitable<void> Server::Impl::accept_loop() {
  asio::steady_timer backoff(io_);
  while (!stopping_ && acceptor_.is_open()) {
    if (connections_.size() >= options_.max_connections) {
      // Full: leave new clients in the listen backlog until a connection ends.
      co_await slot_event_.async_wait(kNoThrow);
      slot_event_.expires_at(Clock::time_point::max());
      continue;
    }
    auto [ec] = co_await acceptor_.async_wait(asio::socket_base::wait_read, kNoThrow);
    if (ec || stopping_) break;
    while (connections_.size() < options_.max_connections) {
      // accept4: the new fd is CLOEXEC from birth (Asio's accept would leave a window
      // in which a fork elsewhere in the supervisor inherits it).
      const int fd =
          ::accept4(acceptor_.native_handle(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd >= 0) {
        spawn_connection(UniqueFd(fd));
        continue;
      }
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // Out of descriptors: the pending client stays queued; retry shortly instead of
        // spinning on a readable listener.
        backoff.expires_after(std::chrono::milliseconds(100));
        co_await backoff.async_wait(kNoThrow);
      }
      break;  // EAGAIN and anything else: wait for readiness again
    }
  }
}

void Server::Impl::connection_finished(ConnectionHandle* c) {
  connections_.erase(c);
  stats_.active = connections_.size();
  slot_event_.cancel();
  if (connections_.empty() && pipes_.kept() > 1) {
    // Kept splice pipes are descriptors: with no connection left, all but one go as soon
    // as this turn of the loop ends (a client already queued behind this one still reuses
    // them). The one left is the pipe the first connection made (listener.cc).
    asio::post(io_, [self = shared_from_this()] {
      if (self->connections_.empty()) self->pipes_.trim(1);
    });
  }
  if (connections_.empty() && !trim_pending_ && !stopping_) {
    trim_pending_ = true;
    trim_timer_.expires_after(kTrimAfterIdle);
    auto self = shared_from_this();
    trim_timer_.async_wait([self](const error_code& ec) {
      self->trim_pending_ = false;
      if (!ec && self->connections_.empty()) self->buffer_cache_.clear();
#if defined(__GLIBC__)
      if (!ec && self->connections_.empty()) ::malloc_trim(0);
#else
      (void)ec;
#endif
    });
  }
  check_stopped();
}

void Server::Impl::stop_listening() {
  stopping_ = true;
  error_code ec;
  acceptor_.close(ec);
  slot_event_.cancel();
  if (!unix_path_.empty()) {
    struct stat st {};
    // Only our own socket: something else may have been put at the path since.
    if (::lstat(unix_path_.c_str(), &st) == 0 && st.st_dev == unix_dev_ && st.st_ino == unix_ino_) {
      ::unlink(unix_path_.c_str());
    }
    unix_path_.clear();
  }
}

void Server::Impl::begin_shutdown() {
  if (stopping_) {
    force_abort();  // a second request to stop: no more grace
    return;
  }
  stop_listening();
  // Connections with nothing in flight go now; the rest get the grace period.
  std::vector<ConnectionHandle*> idle;
  for (ConnectionHandle* c : connections_) {
    if (c->idle())
      idle.push_back(c);
  }
  for (ConnectionHandle* c : idle) c->abort();
  grace_timer_.expires_after(options_.shutdown_grace);
  auto self = shared_from_this();
  grace_timer_.async_wait([self](const error_code& wec) {
    if (!wec) self->force_abort();
  });
  check_stopped();
}

void Server::Impl::force_abort() {
  if (!stopping_) stop_listening();
  std::vector<ConnectionHandle*> all(connections_.begin(), connections_.end());
  for (ConnectionHandle* c : all) c->abort();
  // Their sockets are closed: nothing more reaches or leaves them. A coroutine may still
  // be parked on a DNS answer or the metadata lookup (bounded by their own deadlines);
  // it finds closed sockets when it wakes. Stopping does not wait for that.
  connections_.clear();
  stats_.active = 0;
  check_stopped();
}

void Server::Impl::check_stopped() {
  if (!stopping_ || stopped_ || !connections_.empty()) return;
  stopped_ = true;
  grace_timer_.cancel();
  guard_inputs_.cancel();
  trim_timer_.cancel();
  pipes_.clear();
  if (on_stopped_) {
    auto cb = std::move(on_stopped_);
    cb();
  }
}

// --- Server ------------------------------------------------------------------------------

Result<std::unique_ptr<Server>> Server::create(asio::io_context& io, const NetworkPolicy& net,
                                               ServerOptions options,
                                               std::shared_ptr<Resolver> resolver,
                                               std::shared_ptr<EventSink> sink) {
  if (!resolver || !sink)
    return make_error(Errc::kInternal, "proxy server needs a resolver and an event sink");
  auto matcher = DomainMatcher::build(net);
  VIGIL_TRY(matcher);
  auto denied = parse_denied_resolved_addresses(net.denied_resolved_addresses);
  VIGIL_TRY(denied);
  auto parent = build_parent_route(net.parent_proxy);
  VIGIL_TRY(parent);
  auto mitm = build_mitm_route(net.mitm_proxy);
  VIGIL_TRY(mitm);
  auto impl = std::make_shared<Impl>(io, std::move(*matcher), std::move(*denied), options,
                                     std::move(resolver), std::move(sink), std::move(*parent));
  impl->set_mitm(std::move(*mitm));
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

Server::Server(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() {
  // Connections hold the Impl; cut them so nothing outlives the Server's owner's
  // expectations (and the unix socket path is removed).
  auto impl = impl_;
  impl->on_stopped_ = nullptr;
  impl->force_abort();
  impl->shutdown_resolver();
}

Result<void> Server::listen(const ListenAddress& where) { return impl_->listen(where); }
Result<void> Server::listen_fd(UniqueFd fd) { return impl_->adopt(std::move(fd)); }
ListenAddress Server::local_address() const { return impl_->bound_; }
void Server::start() { impl_->start(); }

void Server::shutdown() {
  auto impl = impl_;
  asio::post(impl->io(), [impl] { impl->begin_shutdown(); });
}

void Server::abort() {
  auto impl = impl_;
  asio::post(impl->io(), [impl] { impl->force_abort(); });
}

void Server::on_stopped(std::function<void()> callback) {
  impl_->on_stopped_ = std::move(callback);
}

ServerStats Server::stats() const { return impl_->stats(); }

}  // namespace vigil::proxy
