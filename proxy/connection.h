// One client connection of the proxy and (at most) one upstream connection: a coroutine
// that reads the client's first byte, routes it (SOCKS5, SOCKS4, HTTP), decides, connects
// and relays, and a watchdog timer that enforces every deadline. The members are
// implemented by topic:
//   connection.cc           lifecycle, deadlines, closing, tunnels, routing
//   connection_upstream.cc  resolve once, guard, connect (directly or via a parent proxy)
//   connection_ask.cc       ask mode: hold a request off the allow list for an answer
//   connection_socks.cc     SOCKS5 (and the SOCKS4 refusal)
//   connection_http.cc      CONNECT and absolute-form requests (one decision each)
//   connection_relay.cc     request body, 1xx and final response, framed as the heads say
//   connection_tls.cc       a CONNECT tunnel handed to vigil-tls for termination
// Buffers are fixed per direction: a read is issued only once the previous bytes are
// written, so a slow reader slows its writer (back-pressure with no queue).
#pragma once

#include <array>
#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/ask.h"
#include "proxy/egress.h"
#include "proxy/http_head.h"
#include "proxy/connection_handle.h"
#include "proxy/server_impl.h"
#include "proxy/socks5.h"

namespace vigil::proxy {

using tcp = asio::ip::tcp;

// The outcome of connecting upstream for one request.
struct UpstreamResult {
  enum class Outcome { kConnected, kRefused, kFailed };
  Outcome outcome = Outcome::kFailed;
  int http_status = 502;
  socks5::Reply socks_reply = socks5::Reply::kGeneralFailure;
  std::string message;  // kFailed: for the 502 body
};

class Connection final : public std::enable_shared_from_this<Connection>, public ConnectionHandle {
 public:
  enum class Phase {
    kFirstByte,   // accepted, nothing received yet
    kIdle,        // between keep-alive requests, nothing of the next one received
    kHead,        // reading a request head / SOCKS handshake
    kWaiting,     // resolving (the resolver has its own deadline)
    kConnecting,  // upstream connect: a deadline closes only the upstream socket
    kStreaming,   // relaying: the idle deadline moves with every byte
    kClosing,     // final response written, lingering
  };

  Connection(std::shared_ptr<Server::Impl> server, GenericSocket client)
      : srv_(std::move(server)),
        client_(std::move(client)),
        upstream_(srv_->io()),
        watchdog_(srv_->io()),
        in_(srv_->options().buffer_bytes, srv_->buffer_cache()),
        up_in_(srv_->options().buffer_bytes, srv_->buffer_cache()) {}

  void start();
  Phase phase() const { return phase_; }
  bool idle() const override { return phase_ == Phase::kFirstByte || phase_ == Phase::kIdle; }
  // Closes both sockets: every pending operation completes with an error and the
  // coroutines unwind.
  void abort() override;

 private:
  enum class Next { kKeep, kClose, kAbort };

  // --- deadlines, closing, tunnels, routing (connection.cc) ---------------------------
  void set_phase(Phase p, std::chrono::milliseconds limit);
  void set_deadline(Clock::time_point t);
  void touch();  // traffic moves the idle deadline of a streaming connection
  asio::awaitable<void> watch();
  void finish();
  asio::awaitable<void> final_reply(std::string data);
  asio::awaitable<void> linger();

  // --- the tunnel's relay (connection_tunnel.cc) --------------------------------------
  // Relays client_ <-> upstream_ until both directions end: splice(2) on Linux, else
  // the buffered pump below. A path that must see the bytes (TLS) bypasses it.
  asio::awaitable<void> tunnel();
  template <class From, class To>
  asio::awaitable<void> splice_direction(From& from, To& to, Buffer& early,
                                         std::uint64_t& counter);
  asio::awaitable<void> serve();

  // --- upstream (connection_upstream.cc) ---------------------------------------------
  asio::awaitable<UpstreamResult> connect_upstream(TargetDecision& d);
  asio::awaitable<UpstreamResult> connect_via_mitm(TargetDecision& d, const MitmRoute& via);
  asio::awaitable<UpstreamResult> ask_parent_for_tunnel(TargetDecision& d, std::string via,
                                                        std::string via_address,
                                                        std::optional<IpAddress> guarded);
  asio::awaitable<UpstreamResult> connect_via_parent(TargetDecision& d, const ProxyEndpoint& via,
                                                     const IpAddress& guarded);
  void emit_unsettled(const std::string& address);
  bool upstream_idle_and_open();
  void drop_upstream();

  // --- ask mode (connection_ask.cc) --------------------------------------------------
  asio::awaitable<void> ask_if_off_list(TargetDecision& d);
  asio::awaitable<AskAnswer> hold(AskQuestion q);

  // --- SOCKS (connection_socks.cc) ---------------------------------------------------
  asio::awaitable<void> serve_socks4();
  asio::awaitable<void> serve_socks5();

  // --- HTTP (connection_http.cc; what follows a head: connection_relay.cc) -----------------------
  asio::awaitable<void> http_error(int status, std::string kind, std::string message);
  asio::awaitable<void> serve_http();
  asio::awaitable<void> serve_connect(const http::RequestHead& head);
  // After a CONNECT's 200 (connection_tls.cc): hands a TLS tunnel to be terminated to
  // vigil-tls (true: nothing left to do here), or says to relay it (false).
  asio::awaitable<bool> terminate_tls(const TargetDecision& d);
  // network.refuseOpaqueTunnels and tlsTerminate.maxTunnels (connection_tls.cc): an
  // allowed tunnel the proxy would not terminate (every SOCKS one), or one to terminate
  // while the helper holds as many as allowed, becomes a refusal, said in `d`.
  void refuse_if_opaque(TargetDecision& d, bool socks) const;
  asio::awaitable<bool> serve_request(const http::RequestHead& head);
  asio::awaitable<void> relay_request_body(http::BodyFraming framing);
  asio::awaitable<Next> relay_response(std::string method, bool keep_client);
  asio::awaitable<bool> relay_response_body(http::BodyFraming framing, std::string head);

  // --- I/O helpers -------------------------------------------------------------------
  template <class Socket>
  asio::awaitable<bool> read_into(Socket& s, Buffer& b) {
    if (b.full()) co_return false;
    auto [ec, n] = co_await s.async_read_some(b.prepare(), kNoThrow);
    if (ec || n == 0) co_return false;
    b.commit(n);
    touch();
    co_return true;
  }

  template <class Socket>
  asio::awaitable<bool> write_all(Socket& s, std::string_view data) {
    auto [ec, n] = co_await asio::async_write(s, asio::buffer(data.data(), data.size()), kNoThrow);
    (void)n;
    if (!ec) touch();
    co_return !ec;
  }

  // Two pieces in one gathered write (one segment, one wake-up of the reader).
  template <class Socket>
  asio::awaitable<bool> write_all(Socket& s, std::string_view first, std::string_view second) {
    const std::array<asio::const_buffer, 2> bufs = {asio::buffer(first.data(), first.size()),
                                                    asio::buffer(second.data(), second.size())};
    auto [ec, n] = co_await asio::async_write(s, bufs, kNoThrow);
    (void)n;
    if (!ec) touch();
    co_return !ec;
  }

  // The buffered relay: copies one direction of a tunnel until EOF (then half-closes the other side) or an
  // error (then aborts both). Bytes already buffered go first (a TLS ClientHello sent
  // right behind the CONNECT, SOCKS early data).
  template <class From, class To>
  asio::awaitable<void> pump(From& from, To& to, Buffer& buf, std::uint64_t& counter) {
    while (true) {
      if (!buf.empty()) {
        const std::size_t n = buf.size();
        const bool written = co_await write_all(to, buf.view());
        if (!written) {
          abort();
          co_return;
        }
        counter += n;
        buf.consume(n);
      }
      auto [ec, n] = co_await from.async_read_some(buf.prepare(), kNoThrow);
      if (ec == asio::error::eof) {
        half_close(to);
        co_return;
      }
      if (ec) {
        abort();
        co_return;
      }
      buf.commit(n);
      touch();
    }
  }

  // A tunnel direction reached EOF: relay it as shutdown(SHUT_WR) of `to`. When the other
  // direction ended at EOF already, the connection closes both sockets next, and the close
  // sends that FIN (both receive queues are drained: each read reached EOF).
  template <class To>
  void half_close(To& to) {
    if (++tunnel_eofs_ == 2) return;
    error_code sec;
    to.shutdown(asio::socket_base::shutdown_send, sec);
  }

  // --- SOCKS byte helpers --------------------------------------------------------------
  static std::span<const std::uint8_t> bytes(std::string_view v) {
    return {reinterpret_cast<const std::uint8_t*>(v.data()), v.size()};
  }

  template <std::size_t N>
  asio::awaitable<bool> write_bytes(std::array<std::uint8_t, N> b) {
    const bool written =
        co_await write_all(client_, std::string_view(reinterpret_cast<const char*>(b.data()), N));
    co_return written;
  }

  std::shared_ptr<Server::Impl> srv_;
  GenericSocket client_;
  tcp::socket upstream_;
  asio::steady_timer watchdog_;
  Clock::time_point deadline_ = Clock::time_point::max();
  Phase phase_ = Phase::kFirstByte;
  Buffer in_;     // client -> proxy
  Buffer up_in_;  // upstream -> proxy
  bool finished_ = false;
  bool connect_timed_out_ = false;
  bool body_done_ = true;
  bool body_failed_ = false;
  int tunnel_eofs_ = 0;  // tunnel directions that ended at EOF (half_close)
  // The kept-alive upstream of an HTTP connection, for the next request to the same
  // host:port.
  bool upstream_open_ = false;
  std::string upstream_key_;
  IpAddress upstream_address_;
  // An allowed decision whose connect has not settled yet (connect_upstream).
  std::optional<NetDecision> unsettled_;
  // Ask mode: the addresses guarded before the question (connect_upstream takes them),
  // and the timer a held request waits on.
  std::optional<std::vector<IpAddress>> held_addresses_;
  std::shared_ptr<asio::steady_timer> ask_timer_;
};

}  // namespace vigil::proxy
