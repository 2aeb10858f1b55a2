// The tunnel's relay (proxy/connection_tunnel.cc) with real sockets on loopback, run both
// ways: splice(2) (the default on Linux) and the buffered relay (splice_tunnels = false,
// the path for bytes that must pass through user space). A large transfer both ways at
// once arrives byte-exact; a half-close propagates in each direction; a reader that reads
// nothing stalls its writer with a bounded amount in flight; a client that vanishes
// mid-transfer leaves no connection, pipe or descriptor behind.
#include <arpa/inet.h>
#include <dirent.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <cstring>
#include <functional>
#include <future>
#include <map>
#include <string>
#include <thread>

#include "proxy/server.h"
#include "proxy/splice_pipe.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil::proxy {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

UniqueFd connect_to(std::uint16_t port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) return UniqueFd();
  return fd;
}

bool send_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// Reads until EOF, an error, or `timeout`; `eof` says whether the peer closed.
std::string recv_to_eof(int fd, std::chrono::milliseconds timeout, bool* eof) {
  std::string out;
  *eof = false;
  const auto until = Clock::now() + timeout;
  char buf[65536];
  while (Clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n == 0) *eof = true;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

std::string recv_exactly(int fd, std::size_t want, std::chrono::milliseconds timeout) {
  std::string out;
  const auto until = Clock::now() + timeout;
  char buf[4096];
  while (out.size() < want && Clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = ::recv(fd, buf, std::min(sizeof buf, want - out.size()), 0);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

// A byte pattern no relay bug reproduces by accident (a shifted, dropped or repeated
// block changes it): xorshift from `seed`.
std::string pattern(std::size_t n, std::uint32_t seed) {
  std::string s(n, '\0');
  std::uint32_t x = seed;
  for (auto& c : s) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    c = static_cast<char>(x & 0xFF);
  }
  return s;
}

std::size_t open_fds() {
  std::size_t n = 0;
  DIR* d = ::opendir("/proc/self/fd");
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] != '.') ++n;
  }
  ::closedir(d);
  return n;
}

template <class Done>
bool wait_for(Done done, Clock::duration bound) {
  const auto until = Clock::now() + bound;
  while (!done() && Clock::now() < until) std::this_thread::sleep_for(5ms);
  return done();
}

// One upstream connection on 127.0.0.1, handled by `handler` on its own thread.
class OneShotBackend {
 public:
  explicit OneShotBackend(std::function<void(int)> handler) {
    listen_ = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listen_.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa);
    ::listen(listen_.get(), 4);
    socklen_t len = sizeof sa;
    ::getsockname(listen_.get(), reinterpret_cast<sockaddr*>(&sa), &len);
    port_ = ntohs(sa.sin_port);
    thread_ = std::thread([this, handler = std::move(handler)] {
      const int fd = ::accept4(listen_.get(), nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) return;
      UniqueFd owned(fd);
      handler(fd);
      done_ = true;
    });
  }
  ~OneShotBackend() {
    ::shutdown(listen_.get(), SHUT_RDWR);
    thread_.join();
  }
  std::uint16_t port() const { return port_; }
  bool done() const { return done_; }

 private:
  UniqueFd listen_;
  std::uint16_t port_ = 0;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

class NullSink : public EventSink {
 public:
  void on_decision(const NetDecision&) override {}
};

// The server in-process (its io_context on a thread), allowing "a.test" -> 127.0.0.1.
class TunnelProxy {
 public:
  explicit TunnelProxy(bool splice,
                       const ListenAddress& where = {ListenAddress::Kind::kTcp, "", "127.0.0.1", 0}) {
    NetworkPolicy net;
    net.allowed_domains = {"a.test"};
    ServerOptions o;
    o.test_allow_loopback = true;
    o.idle_timeout = 10s;
    o.splice_tunnels = splice;
    auto server = Server::create(io_, net, o,
                                 make_static_resolver({{"a.test", {asio_addr("127.0.0.1")}}}),
                                 std::make_shared<NullSink>());
    EXPECT_TRUE(server.ok()) << server.error().message;
    server_ = std::move(*server);
    auto r = server_->listen(where);
    EXPECT_TRUE(r.ok()) << r.error().message;
    server_->start();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~TunnelProxy() {
    boost::asio::post(io_, [this] { server_.reset(); });
    for (int i = 0; i < 200 && !io_.stopped(); ++i) std::this_thread::sleep_for(5ms);
    io_.stop();
    thread_.join();
  }
  static IpAddress asio_addr(const char* s) { return boost::asio::ip::make_address(s); }
  std::uint16_t port() const { return server_->local_address().port; }

  // A client whose CONNECT to a.test:port was answered 200.
  UniqueFd open_tunnel(std::uint16_t target) { return open_tunnel(connect_to(port()), target); }
  // The same over a client connection made by the caller (a Unix socket, as vigil-init's
  // bridges connect).
  UniqueFd open_tunnel(UniqueFd c, std::uint16_t target) {
    const std::string head = "CONNECT a.test:" + std::to_string(target) + " HTTP/1.1\r\n\r\n";
    if (!c || !send_all(c.get(), head)) return UniqueFd();
    const std::string established = "HTTP/1.1 200 Connection Established\r\n\r\n";
    if (recv_exactly(c.get(), established.size(), 5000ms) != established) return UniqueFd();
    return c;
  }
  ServerStats stats() {
    std::promise<ServerStats> p;
    boost::asio::post(io_, [&] { p.set_value(server_->stats()); });
    return p.get_future().get();
  }

 private:
  boost::asio::io_context io_;
  std::unique_ptr<Server> server_;
  std::thread thread_;
};

class TunnelRelay : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam() && !splice_available()) GTEST_SKIP() << "splice(2) is Linux only";
  }
};

INSTANTIATE_TEST_SUITE_P(Relay, TunnelRelay, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "Splice" : "Buffered"; });

// 24 MiB each way at once, both byte-exact (each side writes while the other reads, so a
// relay that served one direction at a time would stall instead of finishing).
TEST_P(TunnelRelay, LargeTransferBothWaysIsByteExact) {
  constexpr std::size_t kSize = 24u << 20;
  const std::string up = pattern(kSize, 0x1234567u);
  const std::string down = pattern(kSize, 0x89abcdefu);
  std::string got_up;
  OneShotBackend be([&](int fd) {
    std::thread writer([&] {
      send_all(fd, down);
      ::shutdown(fd, SHUT_WR);
    });
    bool eof = false;
    got_up = recv_to_eof(fd, 60000ms, &eof);
    writer.join();
  });
  TunnelProxy px(GetParam());
  UniqueFd c = px.open_tunnel(be.port());
  ASSERT_TRUE(c);
  std::thread writer([&] {
    send_all(c.get(), up);
    ::shutdown(c.get(), SHUT_WR);
  });
  bool eof = false;
  const std::string got_down = recv_to_eof(c.get(), 60000ms, &eof);
  writer.join();
  ASSERT_TRUE(wait_for([&] { return be.done(); }, 20s));
  EXPECT_TRUE(eof);
  EXPECT_EQ(got_down.size(), kSize);
  EXPECT_TRUE(got_down == down) << "the bytes from upstream changed in the tunnel";
  EXPECT_EQ(got_up.size(), kSize);
  EXPECT_TRUE(got_up == up) << "the bytes to upstream changed in the tunnel";
  const ServerStats s = px.stats();
  EXPECT_EQ(s.bytes_up, kSize);
  EXPECT_EQ(s.bytes_down, kSize);
}

// The client half-closes first: upstream sees EOF, answers after it, and the client reads
// that answer and then EOF.
TEST_P(TunnelRelay, ClientHalfClosePropagates) {
  OneShotBackend be([](int fd) {
    bool eof = false;
    const std::string got = recv_to_eof(fd, 10000ms, &eof);
    send_all(fd, eof ? "saw eof after [" + got + "]" : "no eof");
  });
  TunnelProxy px(GetParam());
  UniqueFd c = px.open_tunnel(be.port());
  ASSERT_TRUE(c);
  ASSERT_TRUE(send_all(c.get(), "question"));
  ::shutdown(c.get(), SHUT_WR);
  bool eof = false;
  EXPECT_EQ(recv_to_eof(c.get(), 10000ms, &eof), "saw eof after [question]");
  EXPECT_TRUE(eof);
}

// Upstream half-closes first: the client sees EOF, and what it sends afterwards still
// reaches upstream.
TEST_P(TunnelRelay, UpstreamHalfClosePropagates) {
  std::string after;
  OneShotBackend be([&](int fd) {
    send_all(fd, "banner");
    ::shutdown(fd, SHUT_WR);
    bool eof = false;
    after = recv_to_eof(fd, 10000ms, &eof);
  });
  TunnelProxy px(GetParam());
  UniqueFd c = px.open_tunnel(be.port());
  ASSERT_TRUE(c);
  bool eof = false;
  EXPECT_EQ(recv_to_eof(c.get(), 10000ms, &eof), "banner");
  EXPECT_TRUE(eof);
  ASSERT_TRUE(send_all(c.get(), "still talking"));
  ::shutdown(c.get(), SHUT_WR);
  ASSERT_TRUE(wait_for([&] { return be.done(); }, 20s));
  EXPECT_EQ(after, "still talking");
}

// A client that reads nothing: upstream's socket becomes unwritable (observed by its own
// polls) with a bounded amount written, and reading resumes the flow.
TEST_P(TunnelRelay, SlowReaderStallsTheWriterWithBoundedBytesInFlight) {
  constexpr std::size_t kUnbounded = 32u << 20;
  std::atomic<std::size_t> written{0};
  std::atomic<int> unwritable_polls{0};
  std::atomic<bool> stop{false};
  OneShotBackend be([&](int fd) {
    const std::string chunk(64 * 1024, 'z');
    while (!stop) {
      pollfd p{fd, POLLOUT, 0};
      if (::poll(&p, 1, 50) <= 0) {
        ++unwritable_polls;
        continue;
      }
      const ssize_t n = ::send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && errno != EAGAIN) return;
      if (n > 0) {
        unwritable_polls = 0;
        written += static_cast<std::size_t>(n);
      }
    }
  });
  TunnelProxy px(GetParam());
  UniqueFd c = px.open_tunnel(be.port());
  ASSERT_TRUE(c);
  const auto by = Clock::now() + 20s;
  while (unwritable_polls.load() < 10 && written.load() < kUnbounded && Clock::now() < by) {
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_GE(unwritable_polls.load(), 10) << "upstream never stalled (" << written << " bytes)";
  const std::size_t stalled = written.load();
  EXPECT_LT(stalled, kUnbounded);
  std::size_t got = 0;
  char buf[65536];
  while (got < stalled + (1u << 20) && Clock::now() < by + 20s) {
    pollfd p{c.get(), POLLIN, 0};
    if (::poll(&p, 1, 1000) <= 0) continue;
    const ssize_t n = ::recv(c.get(), buf, sizeof buf, 0);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  EXPECT_GE(got, stalled + (1u << 20));
  stop = true;
}

// The client goes away (closing with unread bytes: a reset) while upstream streams: the
// connection ends, upstream's writes fail, and every descriptor of the tunnel (sockets,
// and the pipe that held bytes in flight) is closed; kept pipes beyond the server's one
// once no connection is left.
TEST_P(TunnelRelay, ClientVanishingMidTransferFreesEverything) {
  std::atomic<bool> write_failed{false};
  OneShotBackend be([&](int fd) {
    const std::string chunk(64 * 1024, 'v');
    const auto until = Clock::now() + 20s;
    while (Clock::now() < until) {
      if (::send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL) <= 0) {
        write_failed = true;
        return;
      }
    }
  });
  TunnelProxy px(GetParam());
  // The baseline is taken once a first connection has come and gone: what the server
  // sets up once for it (the metadata lookup, the one kept pipe) is not the tunnel's.
  {
    UniqueFd first = connect_to(px.port());
    ASSERT_TRUE(send_all(first.get(), "GET http://nope.test/ HTTP/1.1\r\n\r\n"));
    bool eof = false;
    (void)recv_to_eof(first.get(), 5000ms, &eof);
  }
  ASSERT_TRUE(wait_for([&] { return px.stats().active == 0; }, 20s));
  const std::size_t before = open_fds();
  {
    UniqueFd c = px.open_tunnel(be.port());
    ASSERT_TRUE(c);
    EXPECT_EQ(recv_exactly(c.get(), 256 * 1024, 5000ms).size(), 256u * 1024);
  }  // closed with bytes unread
  EXPECT_TRUE(wait_for([&] { return px.stats().active == 0; }, 20s)) << px.stats().active;
  EXPECT_TRUE(wait_for([&] { return be.done(); }, 20s));
  EXPECT_TRUE(write_failed) << "upstream kept writing into a tunnel whose client is gone";
  // The backend's own socket is closed by now; the proxy's go with the connection.
  EXPECT_TRUE(wait_for([&] { return open_fds() <= before; }, 10s))
      << open_fds() << " descriptors open, " << before << " before the tunnel";
}

// vigil run's clients come over the session's Unix socket (vigil-init's bridges): the
// relay between a Unix stream socket and TCP is byte-exact too, both ways, half-close
// included.
TEST_P(TunnelRelay, UnixSocketClientIsByteExact) {
  constexpr std::size_t kSize = 8u << 20;
  const std::string up = pattern(kSize, 0x2468aceu);
  const std::string down = pattern(kSize, 0x13579bdu);
  std::string got_up;
  OneShotBackend be([&](int fd) {
    bool eof = false;
    got_up = recv_to_eof(fd, 60000ms, &eof);
    send_all(fd, down);
  });
  char dir_template[] = "/tmp/vigil-tunnel-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string path = std::string(dir_template) + "/proxy.sock";
  {
    TunnelProxy px(GetParam(), {ListenAddress::Kind::kUnix, path, "", 0});
    UniqueFd u(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::memcpy(sa.sun_path, path.c_str(), path.size() + 1);
    ASSERT_EQ(::connect(u.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
    UniqueFd c = px.open_tunnel(std::move(u), be.port());
    ASSERT_TRUE(c);
    ASSERT_TRUE(send_all(c.get(), up));
    ::shutdown(c.get(), SHUT_WR);
    bool eof = false;
    const std::string got_down = recv_to_eof(c.get(), 60000ms, &eof);
    ASSERT_TRUE(wait_for([&] { return be.done(); }, 20s));
    EXPECT_TRUE(eof);
    EXPECT_TRUE(got_down == down) << got_down.size() << " bytes back, " << kSize << " sent";
    EXPECT_TRUE(got_up == up) << got_up.size() << " bytes up, " << kSize << " sent";
  }
  ::rmdir(dir_template);
}

}  // namespace
}  // namespace vigil::proxy
