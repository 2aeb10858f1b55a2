// A tunnel's relay (CONNECT, SOCKS5): bytes between the client and the upstream socket,
// both directions at once, until both have ended. The one place where "move bytes between
// two sockets" happens: a path that must see the bytes (TLS termination) does not call
// tunnel(); it relays through its own streams with the buffered pump (connection.h).
//
// On Linux the bytes move with splice(2), socket -> pipe -> socket, never copied through
// user space (splice_pipe.h); ServerOptions::splice_tunnels = false (and other systems)
// relay through the connection's buffers instead. Both keep the same rules: bytes read
// before the tunnel opened go first, at most one buffer (or pipe) in flight per direction
// (a slow reader slows its writer), EOF one way half-closes the other, and an error
// either way cuts both.
#include <boost/asio/co_spawn.hpp>
#include <exception>

#include "proxy/connection.h"
#include "proxy/splice_pipe.h"

namespace vigil::proxy {

namespace {

// Asked of each splice(2) call; the kernel moves at most what the pipe holds.
constexpr std::size_t kSpliceAsk = 1 << 20;
// When no pipe can be made (descriptor limit): the bytes wait in the socket's buffer
// (back-pressure) and the direction tries again after this; the idle deadline still runs.
constexpr std::chrono::milliseconds kPipeRetry{50};

}  // namespace

asio::awaitable<void> Connection::tunnel() {
  set_phase(Phase::kStreaming, srv_->options().idle_timeout);
  const bool splice = splice_available() && srv_->options().splice_tunnels;
  auto self = shared_from_this();
  bool up_done = false;
  asio::steady_timer both(srv_->io(), Clock::time_point::max());
  auto on_up_done = [self, &up_done, &both](std::exception_ptr) {
    up_done = true;
    both.cancel();
  };
  if (splice) {
    asio::co_spawn(srv_->io(), splice_direction(client_, upstream_, in_, srv_->stats().bytes_up),
                   on_up_done);
    co_await splice_direction(upstream_, client_, up_in_, srv_->stats().bytes_down);
  } else {
    asio::co_spawn(srv_->io(), pump(client_, upstream_, in_, srv_->stats().bytes_up), on_up_done);
    co_await pump(upstream_, client_, up_in_, srv_->stats().bytes_down);
  }
  // The other direction may still run (half-close): wait for it.
  while (!up_done) {
    auto [wec] = co_await both.async_wait(kNoThrow);
    (void)wec;
  }
}

// One direction with splice(2). A pipe is held only while bytes are in it (taken when
// `from` has data, given back once drained), so an idle tunnel holds none.
template <class From, class To>
asio::awaitable<void> Connection::splice_direction(From& from, To& to, Buffer& early,
                                                   std::uint64_t& counter) {
  if (!early.empty()) {
    const std::size_t n = early.size();
    const bool written = co_await write_all(to, early.view());
    if (!written) {
      abort();
      co_return;
    }
    counter += n;
    early.consume(n);
  }
  early.release();  // the tunnel needs no buffer: its storage goes back to the cache
  // No read is tried before the first wait: it would need a pipe for a tunnel that may
  // never carry a byte. Asio's readiness wait re-arms the descriptor (EPOLL_CTL_MOD), so
  // bytes that arrived before this direction started are seen at once.
  auto [fec] = co_await from.async_wait(asio::socket_base::wait_read, kNoThrow);
  if (fec) {
    abort();
    co_return;
  }
  PipePool& pool = srv_->pipes();
  while (true) {
    auto taken = pool.take();
    if (!taken) {  // no pipe can be made: nothing was read, the bytes wait in the socket
      asio::steady_timer retry(srv_->io(), kPipeRetry);
      auto [tec] = co_await retry.async_wait(kNoThrow);
      (void)tec;
      if (!from.is_open() || !to.is_open()) co_return;
      continue;
    }
    SplicePipe pipe = std::move(*taken);
    while (true) {  // until `from` has nothing more for now
      const SpliceStep in = splice_step(from.native_handle(), pipe.write.get(), kSpliceAsk);
      if (in.kind == SpliceStep::Kind::kWouldBlock) break;
      if (in.kind == SpliceStep::Kind::kEnd) {
        pool.give(std::move(pipe));
        half_close(to);
        co_return;
      }
      if (in.kind == SpliceStep::Kind::kError) {
        abort();
        co_return;
      }
      touch();
      std::size_t left = in.bytes;
      while (left > 0) {
        const SpliceStep out = splice_step(pipe.read.get(), to.native_handle(), left);
        if (out.kind == SpliceStep::Kind::kMoved) {
          left -= out.bytes;
          counter += out.bytes;
          continue;
        }
        if (out.kind != SpliceStep::Kind::kWouldBlock) {
          abort();  // the pipe, bytes and all, is closed with this frame
          co_return;
        }
        auto [wec] = co_await to.async_wait(asio::socket_base::wait_write, kNoThrow);
        if (wec) {
          abort();
          co_return;
        }
      }
      touch();
    }
    pool.give(std::move(pipe));  // drained: the next direction with data takes it
    auto [rec] = co_await from.async_wait(asio::socket_base::wait_read, kNoThrow);
    if (rec) {
      abort();
      co_return;
    }
  }
}

}  // namespace vigil::proxy
