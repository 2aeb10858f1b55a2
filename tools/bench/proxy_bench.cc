// Loopback load and benchmark for `vigil proxy`, side by side with a direct connection
// to the same server. Runs only with VIGIL_PROXY_BENCH=1 (it takes ~40 s and wants an
// optimised build: VIGIL_BIN=<release build>/supervisor/vigil); prints a table.
//
//   new CONNECT tunnels/s (1 client, and 8 in parallel): connect, CONNECT, 200, 1-byte
//     echo, close — vs connect, 1-byte echo, close direct
//   keep-alive req/s on one connection: absolute-form GET through the proxy vs
//     origin-form GET direct
//   one tunnel MB/s: a server streaming to the client through CONNECT vs direct
//   p50/p99 added latency of one CONNECT tunnel set-up
//   the proxy's RSS (VmHWM/VmRSS) and descriptors, under 500 open tunnels and 1,000
//     slow-loris connections (while a fresh client still gets served), and after
//
// Everything is on 127.0.0.1; counts and durations are bounded.
#include <arpa/inet.h>
#include <dirent.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/harness.h"
#include "tests/integration/proxy_harness.h"

namespace vigil::test {
namespace {

using Clock = std::chrono::steady_clock;

bool bench_enabled() {
  const char* v = std::getenv("VIGIL_PROXY_BENCH");
  return v != nullptr && std::string(v) == "1";
}

// --- a small epoll server: echo, or a fixed HTTP/1.1 keep-alive response ----------------

class EpollServer {
 public:
  enum class Mode { kEcho, kHttp };
  explicit EpollServer(Mode mode) : mode_(mode) {
    listen_ = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    const int one = 1;
    ::setsockopt(listen_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listen_.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa);
    ::listen(listen_.get(), 4096);
    socklen_t len = sizeof sa;
    ::getsockname(listen_.get(), reinterpret_cast<sockaddr*>(&sa), &len);
    port_ = ntohs(sa.sin_port);
    epoll_ = UniqueFd(::epoll_create1(EPOLL_CLOEXEC));
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = listen_.get();
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, listen_.get(), &ev);
    thread_ = std::thread([this] { loop(); });
  }
  ~EpollServer() {
    stop_ = true;
    thread_.join();
    for (auto& [fd, buf] : conns_) UniqueFd close_it(fd);
  }
  std::uint16_t port() const { return port_; }

 private:
  void loop() {
    epoll_event events[256];
    while (!stop_) {
      const int n = ::epoll_wait(epoll_.get(), events, 256, 50);
      for (int i = 0; i < n; ++i) {
        const int fd = events[i].data.fd;
        if (fd == listen_.get()) {
          while (true) {
            const int c = ::accept4(listen_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (c < 0) break;
            const int one = 1;
            ::setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            epoll_event ev{};
            ev.events = EPOLLIN;
            ev.data.fd = c;
            ::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, c, &ev);
            conns_.emplace_back(c, std::string());
          }
          continue;
        }
        char buf[16384];
        const ssize_t r = ::recv(fd, buf, sizeof buf, 0);
        auto it = std::find_if(conns_.begin(), conns_.end(),
                               [fd](const auto& p) { return p.first == fd; });
        if (r <= 0) {
          ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
          if (it != conns_.end()) {
            UniqueFd close_it(it->first);
            conns_.erase(it);
          }
          continue;
        }
        if (mode_ == Mode::kEcho) {
          (void)::send(fd, buf, static_cast<std::size_t>(r), MSG_NOSIGNAL);
        } else if (it != conns_.end()) {
          it->second.append(buf, static_cast<std::size_t>(r));
          std::size_t end;
          while ((end = it->second.find("\r\n\r\n")) != std::string::npos) {
            it->second.erase(0, end + 4);
            static const char kReply[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
            (void)::send(fd, kReply, sizeof kReply - 1, MSG_NOSIGNAL);
          }
        }
      }
    }
  }

  Mode mode_;
  UniqueFd listen_;
  UniqueFd epoll_;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::vector<std::pair<int, std::string>> conns_;
};

// Streams zeros to each client until it closes (one thread per connection).
class SourceServer {
 public:
  SourceServer() {
    listen_ = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listen_.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa);
    ::listen(listen_.get(), 16);
    socklen_t len = sizeof sa;
    ::getsockname(listen_.get(), reinterpret_cast<sockaddr*>(&sa), &len);
    port_ = ntohs(sa.sin_port);
    thread_ = std::thread([this] {
      while (!stop_) {
        const int c = ::accept4(listen_.get(), nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0) return;
        UniqueFd conn(c);
        // Wait for the first byte (a CONNECT's tunnel is open by then), then stream.
        char b;
        if (::recv(c, &b, 1, 0) != 1) continue;
        static const std::string chunk(256 * 1024, '\0');
        while (::send(c, chunk.data(), chunk.size(), MSG_NOSIGNAL) > 0) {
        }
      }
    });
  }
  ~SourceServer() {
    stop_ = true;
    ::shutdown(listen_.get(), SHUT_RDWR);
    thread_.join();
  }
  std::uint16_t port() const { return port_; }

 private:
  UniqueFd listen_;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// --- client side ------------------------------------------------------------------------

bool send_str(int fd, const std::string& s) {
  return ::send(fd, s.data(), s.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(s.size());
}

// Reads until `needle` has arrived.
bool recv_until_has(int fd, std::string* buf, const std::string& needle) {
  char tmp[4096];
  while (buf->find(needle) == std::string::npos) {
    const ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
    if (n <= 0) return false;
    buf->append(tmp, static_cast<std::size_t>(n));
  }
  return true;
}

// One short-lived tunnel (or direct connection): the unit of "new connections/s".
bool one_connection(std::uint16_t port, const std::string& connect_line) {
  UniqueFd fd = tcp_connect_loopback(port);
  if (!fd) return false;
  const int one = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  std::string buf;
  if (!connect_line.empty()) {
    if (!send_str(fd.get(), connect_line) || !recv_until_has(fd.get(), &buf, "\r\n\r\n"))
      return false;
    if (buf.rfind("HTTP/1.1 200", 0) != 0) return false;
    buf.clear();
  }
  if (!send_str(fd.get(), "x")) return false;
  return recv_until_has(fd.get(), &buf, "x");
}

struct Rate {
  double per_second = 0;
  std::uint64_t count = 0;
  std::uint64_t failures = 0;
};

Rate connection_rate(std::uint16_t port, const std::string& connect_line, int threads,
                     std::chrono::seconds span) {
  std::atomic<std::uint64_t> ok{0}, bad{0};
  const auto end = Clock::now() + span;
  const auto t0 = Clock::now();
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i) {
    pool.emplace_back([&] {
      while (Clock::now() < end) (one_connection(port, connect_line) ? ok : bad)++;
    });
  }
  for (auto& t : pool) t.join();
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  return {static_cast<double>(ok.load()) / secs, ok.load(), bad.load()};
}

Rate keepalive_rate(std::uint16_t port, const std::string& request, std::chrono::seconds span) {
  UniqueFd fd = tcp_connect_loopback(port);
  const int one = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  std::uint64_t n = 0;
  const auto t0 = Clock::now();
  const auto end = t0 + span;
  std::string buf;
  while (Clock::now() < end) {
    if (!send_str(fd.get(), request)) break;
    buf.clear();
    if (!recv_until_has(fd.get(), &buf, "\r\n\r\nok")) break;
    ++n;
  }
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  return {static_cast<double>(n) / secs, n, 0};
}

double tunnel_mb_per_s(std::uint16_t port, const std::string& connect_line,
                       std::chrono::seconds span) {
  UniqueFd fd = tcp_connect_loopback(port);
  std::string buf;
  if (!connect_line.empty()) {
    send_str(fd.get(), connect_line);
    recv_until_has(fd.get(), &buf, "\r\n\r\n");
  }
  send_str(fd.get(), "x");
  std::vector<char> big(256 * 1024);
  std::uint64_t bytes = 0;
  const auto t0 = Clock::now();
  const auto end = t0 + span;
  while (Clock::now() < end) {
    const ssize_t n = ::recv(fd.get(), big.data(), big.size(), 0);
    if (n <= 0) break;
    bytes += static_cast<std::uint64_t>(n);
  }
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  return static_cast<double>(bytes) / secs / 1e6;
}

std::vector<double> setup_latencies_us(std::uint16_t port, const std::string& connect_line, int n) {
  std::vector<double> out;
  for (int i = 0; i < n; ++i) {
    const auto t0 = Clock::now();
    if (one_connection(port, connect_line)) {
      out.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

double pct(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  return sorted[std::min(sorted.size() - 1,
                         static_cast<std::size_t>(p * static_cast<double>(sorted.size())))];
}

long proc_status_kb(pid_t pid, const char* field) {
  const std::string s = read_file("/proc/" + std::to_string(pid) + "/status");
  const std::size_t at = s.find(field);
  if (at == std::string::npos) return -1;
  return std::atol(s.c_str() + at + std::strlen(field) + 1);
}

std::size_t proc_fds(pid_t pid) {
  std::size_t n = 0;
  DIR* d = ::opendir(("/proc/" + std::to_string(pid) + "/fd").c_str());
  if (d == nullptr) return 0;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] != '.') ++n;
  }
  ::closedir(d);
  return n;
}

const char* kSettings = R"({"network": {"allowedDomains": ["bench.test"]}})";

TEST(ProxyBench, ThroughputAndLoad) {
  if (!bench_enabled())
    GTEST_SKIP() << "set VIGIL_PROXY_BENCH=1 (and VIGIL_BIN to an optimised build)";
  rlimit rl{};
  ::getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &rl);

  TempDir tmp;
  EpollServer echo(EpollServer::Mode::kEcho);
  EpollServer http(EpollServer::Mode::kHttp);
  SourceServer source;
  ProxyProcess proxy(
      tmp, kSettings,
      {"--test-resolve", "bench.test=127.0.0.1", "--test-allow-loopback", "--idle-timeout", "60"});
  ASSERT_TRUE(proxy.ready()) << proxy.err();
  const pid_t ppid = proxy.process().pid();
  const std::uint16_t pp = proxy.port();
  const std::string connect_echo =
      "CONNECT bench.test:" + std::to_string(echo.port()) + " HTTP/1.1\r\n\r\n";
  const auto span = std::chrono::seconds(3);

  const Rate direct1 = connection_rate(echo.port(), "", 1, span);
  const Rate proxy1 = connection_rate(pp, connect_echo, 1, span);
  const Rate direct8 = connection_rate(echo.port(), "", 8, span);
  const Rate proxy8 = connection_rate(pp, connect_echo, 8, span);
  EXPECT_EQ(proxy1.failures + proxy8.failures, 0u);

  const Rate ka_direct =
      keepalive_rate(http.port(), "GET /x HTTP/1.1\r\nHost: bench.test\r\n\r\n", span);
  const Rate ka_proxy = keepalive_rate(pp,
                                       "GET http://bench.test:" + std::to_string(http.port()) +
                                           "/x HTTP/1.1\r\nHost: bench.test\r\n\r\n",
                                       span);

  const double mb_direct = tunnel_mb_per_s(source.port(), "", span);
  const double mb_proxy = tunnel_mb_per_s(
      pp, "CONNECT bench.test:" + std::to_string(source.port()) + " HTTP/1.1\r\n\r\n", span);

  const auto lat_direct = setup_latencies_us(echo.port(), "", 2000);
  const auto lat_proxy = setup_latencies_us(pp, connect_echo, 2000);
  const long rss_after_bench = proc_status_kb(ppid, "VmRSS:");
  const long hwm_after_bench = proc_status_kb(ppid, "VmHWM:");

  // --- load: 500 open tunnels + 1,000 slow-loris connections, and a fresh client ---
  const std::size_t fds_idle = proc_fds(ppid);
  std::vector<UniqueFd> tunnels;
  for (int i = 0; i < 500; ++i) {
    UniqueFd fd = tcp_connect_loopback(pp);
    std::string buf;
    ASSERT_TRUE(send_str(fd.get(), connect_echo) && recv_until_has(fd.get(), &buf, "\r\n\r\n"))
        << i;
    ASSERT_TRUE(send_str(fd.get(), "y") && recv_until_has(fd.get(), &buf, "y"));
    tunnels.push_back(std::move(fd));
  }
  std::vector<UniqueFd> loris;
  for (int i = 0; i < 1000; ++i) {
    UniqueFd fd = tcp_connect_loopback(pp);
    ASSERT_TRUE(fd) << i;
    send_str(fd.get(), "GET http://bench.test/ HTTP/1.1\r\nX-Slow: ");  // never finished
    loris.push_back(std::move(fd));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto t_fresh = Clock::now();
  const bool fresh_ok = one_connection(pp, connect_echo);
  const double fresh_ms = std::chrono::duration<double, std::milli>(Clock::now() - t_fresh).count();
  EXPECT_TRUE(fresh_ok) << "a fresh client was not served under load";
  // Every open tunnel still works.
  int alive = 0;
  for (auto& t : tunnels) {
    std::string buf;
    if (send_str(t.get(), "z") && recv_until_has(t.get(), &buf, "z")) ++alive;
  }
  EXPECT_EQ(alive, 500);
  const long rss_loaded = proc_status_kb(ppid, "VmRSS:");
  const std::size_t fds_loaded = proc_fds(ppid);
  tunnels.clear();
  loris.clear();
  std::size_t fds_after = 0;
  for (int i = 0; i < 100; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    fds_after = proc_fds(ppid);
    if (fds_after <= fds_idle) break;
  }
  // The proxy hands freed buffers back to the OS one second after going idle.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const long rss_after = proc_status_kb(ppid, "VmRSS:");
  EXPECT_LE(fds_after, fds_idle) << "descriptors left after the load closed";

  std::printf("\n=== vigil proxy, loopback (%s) ===\n", vigil_bin().c_str());
  std::printf("%-42s %12s %12s %8s\n", "", "via proxy", "direct", "ratio");
  std::printf("%-42s %12.0f %12.0f %7.0f%%\n", "new CONNECT tunnels/s, 1 client", proxy1.per_second,
              direct1.per_second, 100 * proxy1.per_second / direct1.per_second);
  std::printf("%-42s %12.0f %12.0f %7.0f%%\n", "new CONNECT tunnels/s, 8 clients",
              proxy8.per_second, direct8.per_second, 100 * proxy8.per_second / direct8.per_second);
  std::printf("%-42s %12.0f %12.0f %7.0f%%\n", "keep-alive req/s, 1 connection",
              ka_proxy.per_second, ka_direct.per_second,
              100 * ka_proxy.per_second / ka_direct.per_second);
  std::printf("%-42s %12.0f %12.0f %7.0f%%\n", "one tunnel MB/s (server -> client)", mb_proxy,
              mb_direct, 100 * mb_proxy / mb_direct);
  std::printf("%-42s %12.0f %12.0f %+8.0f\n", "connection set-up p50 (us)", pct(lat_proxy, 0.5),
              pct(lat_direct, 0.5), pct(lat_proxy, 0.5) - pct(lat_direct, 0.5));
  std::printf("%-42s %12.0f %12.0f %+8.0f\n", "connection set-up p99 (us)", pct(lat_proxy, 0.99),
              pct(lat_direct, 0.99), pct(lat_proxy, 0.99) - pct(lat_direct, 0.99));
  std::printf(
      "proxy RSS: %ld KiB after the benchmark (peak %ld KiB); %ld KiB with 500 tunnels + 1000 "
      "slow-loris "
      "open (%zu fds); %ld KiB 1.5 s after they closed (%zu fds, %zu before)\n",
      rss_after_bench, hwm_after_bench, rss_loaded, fds_loaded, rss_after, fds_after, fds_idle);
  std::printf("fresh client under that load: served in %.1f ms\n", fresh_ms);
}

}  // namespace
}  // namespace vigil::test
