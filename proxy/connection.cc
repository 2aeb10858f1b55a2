// A proxy connection's lifecycle: start, deadlines (one watchdog timer per connection
// for every phase), closing gracefully, and routing by the first byte.
#include "proxy/connection.h"

#include <boost/asio/co_spawn.hpp>
#include <exception>

namespace vigil::proxy {

namespace {

// After the proxy's last response on a connection, how long it keeps reading (and
// discarding) so that closing does not turn into a RST that destroys the response
// still in flight to the client.
constexpr std::chrono::milliseconds kLingerTime{2000};
constexpr std::size_t kLingerBytes = 256 * 1024;

}  // namespace

void Connection::start() {
  set_phase(Phase::kFirstByte, srv_->options().first_byte_timeout);
  auto self = shared_from_this();
  asio::co_spawn(srv_->io(), watch(), [self](std::exception_ptr) {});
  asio::co_spawn(srv_->io(), serve(), [self](std::exception_ptr) { self->finish(); });
}

void Connection::abort() {
  error_code ec;
  client_.close(ec);
  upstream_.close(ec);
  upstream_open_ = false;
  if (ask_timer_) ask_timer_->cancel();  // a held request ends with its connection
  // Cut mid-connect: the decision goes out now, not when the connect would have
  // settled (vigil run stops the io_context right after aborting; it may never resume).
  emit_unsettled({});
}

void Connection::set_phase(Phase p, std::chrono::milliseconds limit) {
  phase_ = p;
  set_deadline(Clock::now() + limit);
}

void Connection::set_deadline(Clock::time_point t) {
  deadline_ = t;
  if (t < watchdog_.expiry()) watchdog_.cancel();  // re-arm earlier
}

void Connection::touch() {
  if (phase_ == Phase::kStreaming) deadline_ = Clock::now() + srv_->options().idle_timeout;
}

asio::awaitable<void> Connection::watch() {
  while (!finished_) {
    watchdog_.expires_at(deadline_);
    co_await watchdog_.async_wait(kNoThrow);
    if (finished_) break;
    if (Clock::now() < deadline_) continue;  // moved later, or re-armed earlier
    deadline_ = Clock::time_point::max();
    if (phase_ == Phase::kConnecting) {
      connect_timed_out_ = true;
      error_code ec;
      upstream_.close(ec);
    } else {
      abort();
    }
  }
}

void Connection::finish() {
  finished_ = true;
  watchdog_.cancel();
  abort();
  srv_->connection_finished(this);
}

// The last thing said on a connection: write it, then close gracefully.
// Takes the bytes by value: they must live in this frame across the suspension.
asio::awaitable<void> Connection::final_reply(std::string data) {
  const bool written = co_await write_all(client_, data);
  if (!written) co_return;
  co_await linger();
}

asio::awaitable<void> Connection::linger() {
  set_phase(Phase::kClosing, kLingerTime);
  error_code ec;
  client_.shutdown(asio::socket_base::shutdown_send, ec);
  std::size_t discarded = 0;
  while (discarded < kLingerBytes) {
    in_.consume(in_.size());
    auto [rec, n] = co_await client_.async_read_some(in_.prepare(), kNoThrow);
    if (rec || n == 0) break;
    discarded += n;
  }
}

asio::awaitable<void> Connection::serve() {
  const bool got = co_await read_into(client_, in_);
  if (!got) co_return;
  set_phase(Phase::kHead, srv_->options().head_timeout);
  const auto first = static_cast<unsigned char>(in_.view().front());
  if (first == 0x05) {
    co_await serve_socks5();
  } else if (first == 0x04) {
    co_await serve_socks4();
  } else {
    co_await serve_http();
  }
}

}  // namespace vigil::proxy
