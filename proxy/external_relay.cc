#include "proxy/external_relay.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <cstring>
#include <vector>

#include "proxy/relay_sniff.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil::proxy {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using local = asio::local::stream_protocol;
using boost::system::error_code;

namespace {
// As in the server (connection*.cc): every co_await is a statement of its own (GCC 12 miscompiles a
// co_await inside a condition).
constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);
constexpr std::size_t kBuffer = 64 * 1024;

// Both ends of one relayed connection; whoever finishes first closes both.
struct Conn {
  Conn(local::socket c, asio::io_context& io) : client(std::move(c)), upstream(io) {}
  local::socket client;
  tcp::socket upstream;
  void close() {
    error_code ec;
    client.close(ec);
    upstream.close(ec);
  }
};
}  // namespace

class ExternalRelay::Impl : public std::enable_shared_from_this<Impl> {
 public:
  Impl(asio::io_context& io, Kind kind, std::uint16_t port, std::string origin,
       std::shared_ptr<EventSink> sink)
      : io_(io),
        acceptor_(io),
        kind_(kind),
        port_(port),
        origin_(std::move(origin)),
        sink_(std::move(sink)) {}

  Result<void> bind(const std::string& path) {
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    if (path.empty() || path.size() >= sizeof sa.sun_path) {
      return make_error(Errc::kInvalidPolicy, "relay socket path too long: " + path);
    }
    std::memcpy(sa.sun_path, path.c_str(), path.size());
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
      if (!S_ISSOCK(st.st_mode)) {
        return make_error(Errc::kRefused, path + " exists and is not a socket: not replacing it");
      }
      if (::unlink(path.c_str()) != 0) return system_error("unlink " + path);
    }
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd) return system_error("socket");
    if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0) {
      return system_error("bind " + path);
    }
    if (::chmod(path.c_str(), 0600) != 0) return system_error("chmod " + path);
    if (::listen(fd.get(), SOMAXCONN) != 0) return system_error("listen " + path);
    error_code ec;
    acceptor_.assign(local(), fd.release(), ec);
    if (ec) return make_error(Errc::kInternal, "relay: " + ec.message());
    path_ = path;
    return {};
  }

  void start() {
    asio::co_spawn(io_, accept_loop(shared_from_this()), [](std::exception_ptr) {});
  }

  void abort() {
    error_code ec;
    acceptor_.close(ec);
    for (auto& w : conns_) {
      if (auto c = w.lock()) c->close();
    }
    conns_.clear();
  }

  void remove_socket() {
    if (!path_.empty()) ::unlink(path_.c_str());
    path_.clear();
  }

  asio::io_context& io() { return io_; }

 private:
  static asio::awaitable<void> accept_loop(std::shared_ptr<Impl> self) {
    while (self->acceptor_.is_open()) {
      auto [ec] = co_await self->acceptor_.async_wait(asio::socket_base::wait_read, kNoThrow);
      if (ec) co_return;
      while (true) {
        // accept4: CLOEXEC from birth, as the proxy's own (a fork elsewhere in the
        // supervisor, bwrap's, must not inherit a client).
        UniqueFd fd(::accept4(self->acceptor_.native_handle(), nullptr, nullptr,
                              SOCK_CLOEXEC | SOCK_NONBLOCK));
        if (!fd) break;  // EAGAIN (or out of descriptors): wait for readiness again
        local::socket sock(self->io_);
        error_code aec;
        sock.assign(local(), fd.release(), aec);
        if (aec) continue;
        auto conn = std::make_shared<Conn>(std::move(sock), self->io_);
        std::erase_if(self->conns_, [](const std::weak_ptr<Conn>& w) { return w.expired(); });
        self->conns_.push_back(conn);
        asio::co_spawn(self->io_, relay(self, conn), [conn](std::exception_ptr) { conn->close(); });
      }
    }
  }

  void report(const Sniffed& s) {
    NetDecision d;
    d.proto = s.proto;
    d.host = s.host;
    d.port = s.port;
    d.verdict = NetVerdict::kAllowed;
    d.rule = origin_;
    d.reason = reason(port_, origin_);
    d.address = "127.0.0.1:" + std::to_string(port_);
    sink_->on_decision(d);
  }

  NetProto proto() const { return kind_ == Kind::kHttp ? NetProto::kHttp : NetProto::kSocks5; }

  Sniffed sniff(std::string_view seen) const {
    if (kind_ == Kind::kHttp) return sniff_http_target(seen);
    return sniff_socks5_target(std::span<const std::uint8_t>(
        reinterpret_cast<const std::uint8_t*>(seen.data()), seen.size()));
  }

  // upstream -> client, unchanged.
  static asio::awaitable<void> down(std::shared_ptr<Conn> c) {
    std::vector<char> buf(kBuffer);
    while (true) {
      auto [ec, n] = co_await c->upstream.async_read_some(asio::buffer(buf), kNoThrow);
      if (ec || n == 0) break;
      auto [wec, wn] = co_await asio::async_write(c->client, asio::buffer(buf.data(), n), kNoThrow);
      (void)wn;
      if (wec) break;
    }
    error_code sec;
    c->client.shutdown(asio::socket_base::shutdown_send, sec);
  }

  // client -> upstream, reading the target from the first bytes on the way (they are
  // passed on as they come, never held back).
  static asio::awaitable<void> up(std::shared_ptr<Impl> self, std::shared_ptr<Conn> c) {
    std::string seen;
    bool reported = false;
    std::vector<char> buf(kBuffer);
    while (true) {
      auto [ec, n] = co_await c->client.async_read_some(asio::buffer(buf), kNoThrow);
      if (ec || n == 0) break;
      if (!reported) {
        seen.append(buf.data(), std::min(n, kMaxSniffBytes - seen.size()));
        const Sniffed s = self->sniff(seen);
        if (s.state != Sniffed::State::kIncomplete) {
          self->report(s);
          reported = true;
          seen.clear();
        }
      }
      auto [wec, wn] =
          co_await asio::async_write(c->upstream, asio::buffer(buf.data(), n), kNoThrow);
      (void)wn;
      if (wec) break;
    }
    if (!reported) {
      Sniffed s;
      s.proto = self->proto();
      self->report(s);  // nothing readable was sent: still a connection vigil passed on
    }
    error_code sec;
    c->upstream.shutdown(asio::socket_base::shutdown_send, sec);
  }

  // Connects to the user's proxy, then copies both ways until both directions ended.
  static asio::awaitable<void> relay(std::shared_ptr<Impl> self, std::shared_ptr<Conn> c) {
    const tcp::endpoint to(asio::ip::address_v4::loopback(), self->port_);
    error_code oec;
    c->upstream.assign(tcp::v4(), ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0),
                       oec);
    auto [cec] = co_await c->upstream.async_connect(to, kNoThrow);
    if (cec) {
      NetUpstreamFailure f;
      f.proto = self->proto();
      f.address = "127.0.0.1:" + std::to_string(self->port_);
      f.what = "your proxy (" + self->origin_ + ") on " + f.address +
               " did not accept the connection: " + cec.message();
      self->sink_->on_upstream_failure(f);
      co_return;
    }
    bool up_done = false;
    asio::steady_timer both(self->io_, asio::steady_timer::time_point::max());
    asio::co_spawn(self->io_, up(self, c), [&up_done, &both](std::exception_ptr) {
      up_done = true;
      both.cancel();
    });
    co_await down(c);
    // The other direction may still run (half-close): wait for it (this frame outlives
    // the handler above, which is why it may hold references into it).
    while (!up_done) {
      auto [wec] = co_await both.async_wait(kNoThrow);
      (void)wec;
    }
  }

  asio::io_context& io_;
  local::acceptor acceptor_;
  Kind kind_;
  std::uint16_t port_;
  std::string origin_;
  std::shared_ptr<EventSink> sink_;
  std::string path_;
  std::vector<std::weak_ptr<Conn>> conns_;
};

std::string ExternalRelay::reason(std::uint16_t port, std::string_view origin) {
  return "passed to your proxy on 127.0.0.1:" + std::to_string(port) + " (" + std::string(origin) +
         "), which decides it; vigil did not decide";
}

Result<std::unique_ptr<ExternalRelay>> ExternalRelay::create(asio::io_context& io,
                                                             const std::string& socket_path,
                                                             Kind kind, std::uint16_t port,
                                                             std::string origin,
                                                             std::shared_ptr<EventSink> sink) {
  auto impl = std::make_shared<Impl>(io, kind, port, std::move(origin), std::move(sink));
  VIGIL_TRY_VOID(impl->bind(socket_path));
  return std::unique_ptr<ExternalRelay>(new ExternalRelay(std::move(impl)));
}

ExternalRelay::~ExternalRelay() {
  impl_->abort();
  impl_->remove_socket();
}

void ExternalRelay::start() { impl_->start(); }

void ExternalRelay::abort() {
  asio::post(impl_->io(), [impl = impl_] { impl->abort(); });
}

}  // namespace vigil::proxy
