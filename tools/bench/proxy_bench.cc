// Loopback benchmark of vigil's egress proxy side by side with the reference's (srt's,
// Anthropic's sandbox-runtime) and a direct connection, all in one run; and a load test
// of both proxies. Runs only with VIGIL_PROXY_BENCH=1 and wants an optimised build
// (VIGIL_BIN=<release build>/supervisor/vigil); prints a table. About 2 minutes.
//
// The three paths are measured in interleaved rounds (VIGIL_PROXY_BENCH_ROUNDS, default
// 5; each round runs every measurement once per path, in a rotated order, so a burst of
// load from elsewhere on the machine hits all three alike); the table gives medians over
// the rounds and ratios:
//   new CONNECT tunnels/s (1 client, and 8 in parallel): connect, CONNECT, 200, 1-byte
//     echo, close — vs connect, 1-byte echo, close direct
//   keep-alive req/s on one connection: absolute-form GET through the proxy vs
//     origin-form GET direct; p50/p99 of each request's round trip
//   one tunnel MB/s: a server streaming to the client through CONNECT vs direct
//   p50/p99 of one CONNECT tunnel set-up (the latency a proxy adds to a new connection)
//   each proxy process's RSS (VmRSS, peak VmHWM) after the rounds, and under 500 open
//     tunnels plus 1,000 slow-loris connections (while a fresh client still gets
//     served); vigil's descriptors and RSS after they close. That load runs
//     VIGIL_PROXY_BENCH_LOAD_ROUNDS times (default 3) against the same processes, a line
//     per round (RSS loaded and after, fds), then where the RSS left after the last
//     round lives (/proc/PID/smaps: brk heap, anonymous maps, files): flat after round 1
//     is the allocator's cache, growth would be a leak
// Each row ends with vigil's ratio to srt, to the reference build (VIGIL_PROXY_BENCH_REF=
// <an earlier vigil>: one more column, measured in the same rounds) and to direct.
//
// Both proxies allow exactly "127.0.0.1" (an IP literal on the allow list passes either
// one's address guard: no test option, no DNS) and are asked for 127.0.0.1:PORT.
// vigil's: `vigil proxy --listen tcp:127.0.0.1:0` (the server `vigil run` embeds). srt's:
// tools/bench/srt_proxy.mjs, which starts it as srt does (SandboxManager.initialize in a
// node process); every request carries srt's proxy token. srt is found through
// $SRT_PKG (the package directory), else the cache tools/bench/run_bench.sh installs it
// to; without it (or node) the srt column is left out, with a message.
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
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "supervisor/core/base/base64.h"
#include "tools/bench/bench_process.h"
#include "tools/bench/proxy_load.h"

namespace vigil::bench {
namespace {

using namespace vigil::load;  // the load shared with the proxy load test (proxy_load.h)

using Clock = std::chrono::steady_clock;

bool bench_enabled() {
  const char* v = std::getenv("VIGIL_PROXY_BENCH");
  return v != nullptr && std::string(v) == "1";
}

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

// Requests on one kept-alive connection; each request's round trip (us) is appended to
// `latencies_us`.
Rate keepalive_rate(std::uint16_t port, const std::string& request, std::chrono::seconds span,
                    std::vector<double>* latencies_us) {
  UniqueFd fd = tcp_connect_loopback(port);
  const int one = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  std::uint64_t n = 0;
  const auto t0 = Clock::now();
  const auto end = t0 + span;
  std::string buf;
  while (Clock::now() < end) {
    const auto r0 = Clock::now();
    if (!send_str(fd.get(), request)) break;
    buf.clear();
    if (!recv_until_has(fd.get(), &buf, "\r\n\r\nok")) break;
    latencies_us->push_back(std::chrono::duration<double, std::micro>(Clock::now() - r0).count());
    ++n;
  }
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  return {static_cast<double>(n) / secs, n, n == 0 ? 1u : 0u};
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

void setup_latencies_us(std::uint16_t port, const std::string& connect_line, int n,
                        std::vector<double>* out) {
  for (int i = 0; i < n; ++i) {
    const auto t0 = Clock::now();
    if (one_connection(port, connect_line)) {
      out->push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
  }
}

double pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto& sorted = v;
  return sorted[std::min(sorted.size() - 1,
                         static_cast<std::size_t>(p * static_cast<double>(sorted.size())))];
}

double median(std::vector<double> v) { return pct(std::move(v), 0.5); }

// One way to reach the servers: directly, or through a proxy process.
struct Path {
  std::string name;
  std::uint16_t port = 0;  // where clients connect
  pid_t pid = -1;          // the proxy process; -1 for direct
  std::string host;        // the name the client asks the proxy for
  std::string auth;        // extra header lines for the proxy (srt's token)

  bool proxied() const { return pid > 0; }
  std::string connect_line(std::uint16_t target) const {
    if (!proxied()) return "";
    const std::string authority = host + ":" + std::to_string(target);
    return "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n" + auth + "\r\n";
  }
  std::string get_request(std::uint16_t target) const {
    if (!proxied()) return "GET /x HTTP/1.1\r\nHost: bench.test\r\n\r\n";
    const std::string authority = host + ":" + std::to_string(target);
    return "GET http://" + authority + "/x HTTP/1.1\r\nHost: " + authority + "\r\n" + auth + "\r\n";
  }
};

struct Samples {
  std::vector<double> rate1, rate8, keepalive, mb;  // one value per round
  std::vector<double> setup_us, request_us;         // every sample of every round
  std::uint64_t failures = 0;
};

// srt's package directory: $SRT_PKG, else where run_bench.sh caches its install.
std::string srt_package() {
  if (const char* p = std::getenv("SRT_PKG"); p != nullptr && *p != '\0') return p;
  const char* cache = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const std::string base = cache != nullptr && *cache != '\0' ? std::string(cache)
                           : home != nullptr                  ? std::string(home) + "/.cache"
                                                              : std::string();
  return base + "/vigil-bench/srt/node_modules/@anthropic-ai/sandbox-runtime";
}

const char* kSettings = R"({"network": {"allowedDomains": ["127.0.0.1"]}})";

TEST(ProxyBench, VigilBesideSrtAndDirect) {
  if (!bench_enabled())
    GTEST_SKIP() << "set VIGIL_PROXY_BENCH=1 (and VIGIL_BIN to an optimised build)";
  // Before any proxy starts: both inherit the raised limit.
  rlimit rl{};
  ::getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &rl);
  const char* rounds_env = std::getenv("VIGIL_PROXY_BENCH_ROUNDS");
  const int rounds = rounds_env != nullptr ? std::max(1, std::atoi(rounds_env)) : 5;

  TempDir tmp;
  EpollServer echo(EpollServer::Mode::kEcho);
  EpollServer http(EpollServer::Mode::kHttp);
  SourceServer source;
  ProxyProcess vigil_proxy(tmp, kSettings, {"--idle-timeout", "60"});
  ASSERT_TRUE(vigil_proxy.ready()) << vigil_proxy.err();

  std::vector<Path> paths;
  paths.push_back({"direct", echo.port(), -1, "", ""});
  paths.push_back({"vigil", vigil_proxy.port(), vigil_proxy.process().pid(), "127.0.0.1", ""});

  // srt's proxy, when srt and node are there; and, with VIGIL_PROXY_BENCH_REF=<another
  // vigil binary> (the build before a change), that build's `vigil proxy` as one more
  // column, so that the same interleaved rounds compare the two builds beside srt.
  std::unique_ptr<Background> srt;
  std::unique_ptr<Background> ref;
  std::string srt_note;
  const std::string pkg = srt_package();
  const std::string script = std::string(VIGIL_SOURCE_DIR) + "/tools/bench/srt_proxy.mjs";
  if (!exists(pkg + "/dist/index.js")) {
    srt_note = "srt not found at " + pkg + " (set SRT_PKG, or run tools/bench/run_bench.sh once)";
  } else {
    srt = std::make_unique<Background>(std::vector<std::string>{"node", script}, tmp.path(),
                                       "srt-proxy",
                                       std::map<std::string, std::string>{{"SRT_PKG", pkg}});
    const auto line = srt->wait_for("srt-proxy port (\\d+ token [0-9a-f]+)", false, 60s);
    if (!line) {
      srt_note = "srt's proxy did not start: " + srt->err();
    } else {
      const std::string port = line->substr(0, line->find(' '));
      const std::string token = line->substr(line->rfind(' ') + 1);
      paths.push_back({"srt", static_cast<std::uint16_t>(std::stoi(port)), srt->pid(), "127.0.0.1",
                       "Proxy-Authorization: Basic " + base64_encode("srt:" + token) + "\r\n"});
    }
  }
  const char* ref_bin = std::getenv("VIGIL_PROXY_BENCH_REF");
  if (ref_bin != nullptr && *ref_bin != '\0') {
    const std::string settings = tmp / "ref-settings.json";
    write_file(settings, kSettings);
    ref = std::make_unique<Background>(
        std::vector<std::string>{ref_bin, "proxy", "--settings", settings, "--listen",
                                 "tcp:127.0.0.1:0", "--events", tmp / "ref-events.jsonl",
                                 "--idle-timeout", "60"},
        tmp.path(), "ref-proxy");
    const auto port = ref->wait_for("proxy listening on tcp:127\\.0\\.0\\.1:(\\d+)", true);
    ASSERT_TRUE(port) << "the reference build's proxy did not start: " << ref->err();
    paths.push_back(
        {"ref", static_cast<std::uint16_t>(std::stoi(*port)), ref->pid(), "127.0.0.1", ""});
    std::printf("(the ref column is the reference build %s)\n", ref_bin);
  }

  const auto span = std::chrono::seconds(1);
  std::vector<Samples> samples(paths.size());
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t k = 0; k < paths.size(); ++k) {
      const std::size_t i = (k + static_cast<std::size_t>(r)) % paths.size();
      const Path& p = paths[i];
      Samples& s = samples[i];
      const std::uint16_t echo_at = p.proxied() ? p.port : echo.port();
      const std::uint16_t http_at = p.proxied() ? p.port : http.port();
      const std::uint16_t source_at = p.proxied() ? p.port : source.port();
      const Rate r1 = connection_rate(echo_at, p.connect_line(echo.port()), 1, span);
      const Rate r8 = connection_rate(echo_at, p.connect_line(echo.port()), 8, span);
      const Rate ka = keepalive_rate(http_at, p.get_request(http.port()), span, &s.request_us);
      s.rate1.push_back(r1.per_second);
      s.rate8.push_back(r8.per_second);
      s.keepalive.push_back(ka.per_second);
      s.failures += r1.failures + r8.failures + ka.failures;
      s.mb.push_back(tunnel_mb_per_s(source_at, p.connect_line(source.port()), span));
      setup_latencies_us(echo_at, p.connect_line(echo.port()), 300, &s.setup_us);
    }
  }
  std::vector<long> rss_bench(paths.size(), 0), hwm_bench(paths.size(), 0);
  for (std::size_t i = 0; i < paths.size(); ++i) {
    if (!paths[i].proxied()) continue;
    rss_bench[i] = proc_status_kb(paths[i].pid, "VmRSS:");
    hwm_bench[i] = proc_status_kb(paths[i].pid, "VmHWM:");
  }
  // The load, several times against the same processes: RSS after round 1 that stays
  // flat over the next rounds is the allocator's cache, not growth. The table shows
  // round 1; a line per round follows it.
  const char* load_rounds_env = std::getenv("VIGIL_PROXY_BENCH_LOAD_ROUNDS");
  const int load_rounds = load_rounds_env != nullptr ? std::max(1, std::atoi(load_rounds_env)) : 3;
  std::vector<std::vector<Load>> load_log(paths.size());
  std::vector<RssParts> parts_after(paths.size());
  for (int r = 0; r < load_rounds; ++r) {
    for (std::size_t i = 0; i < paths.size(); ++i) {
      if (!paths[i].proxied()) continue;
      load_log[i].push_back(hold_load(paths[i].pid, paths[i].port,
                                      paths[i].connect_line(echo.port()), paths[i].host));
      parts_after[i] = proc_rss_parts(paths[i].pid);
    }
  }
  std::vector<Load> loads(paths.size());
  for (std::size_t i = 0; i < paths.size(); ++i) {
    if (!load_log[i].empty()) loads[i] = load_log[i].front();
  }

  // vigil's own guarantees under that load (srt's are only reported).
  EXPECT_EQ(samples[1].failures, 0u) << "vigil: failed tunnels or requests";
  EXPECT_TRUE(loads[1].fresh_ok) << "vigil: a fresh client was not served under load";
  EXPECT_EQ(loads[1].alive, 500) << "vigil: open tunnels stopped working under load";
  for (const Load& l : load_log[1]) {
    EXPECT_LE(l.fds_after, loads[1].fds_idle) << "vigil: descriptors left after the load";
  }

  auto index_of = [&](const char* name) -> std::size_t {
    for (std::size_t i = 0; i < paths.size(); ++i)
      if (paths[i].name == name) return i;
    return paths.size();
  };
  const std::size_t srt_at = index_of("srt");
  const std::size_t ref_at = index_of("ref");
  const bool with_srt = srt_at < paths.size();
  const bool with_ref = ref_at < paths.size();
  std::printf("\n=== egress proxies on loopback: %d interleaved rounds, medians (%s) ===\n", rounds,
              vigil_bin().c_str());
  if (!with_srt) std::printf("(%s)\n", srt_note.c_str());
  std::printf("(ratios: above 1 is better for rates, below 1 for times and memory)\n");
  std::printf("%-50s", "");
  for (const Path& p : paths) std::printf(" %10s", p.name.c_str());
  if (with_srt) std::printf(" %10s", "vigil/srt");
  if (with_ref) std::printf(" %10s", "vigil/ref");
  std::printf(" %12s\n", "vigil/direct");
  using Value = std::function<double(std::size_t)>;
  struct Row {
    const char* what;
    Value value;
    bool proxies_only;  // about the proxy processes: no direct value
  };
  auto added = [&](std::vector<double> Samples::*field, double p) -> Value {
    return [&samples, field, p](std::size_t i) {
      return pct(samples[i].*field, p) - pct(samples[0].*field, p);
    };
  };
  auto kib = [](const std::vector<long>& v) -> Value {
    return [&v](std::size_t i) { return static_cast<double>(v[i]); };
  };
  std::vector<long> rss_loaded(paths.size()), rss_closed(paths.size());
  for (std::size_t i = 0; i < paths.size(); ++i) {
    rss_loaded[i] = loads[i].rss_kb;
    rss_closed[i] = loads[i].rss_after_kb;
  }
  const std::vector<Row> rows = {
      {"new CONNECT tunnels/s, 1 client", [&](std::size_t i) { return median(samples[i].rate1); },
       false},
      {"new CONNECT tunnels/s, 8 clients", [&](std::size_t i) { return median(samples[i].rate8); },
       false},
      {"keep-alive req/s, 1 connection",
       [&](std::size_t i) { return median(samples[i].keepalive); }, false},
      {"one tunnel MB/s (server -> client)", [&](std::size_t i) { return median(samples[i].mb); },
       false},
      {"tunnel set-up p50 (us)", [&](std::size_t i) { return pct(samples[i].setup_us, 0.5); },
       false},
      {"tunnel set-up p99 (us)", [&](std::size_t i) { return pct(samples[i].setup_us, 0.99); },
       false},
      {"  added by the proxy, p50 (us)", added(&Samples::setup_us, 0.5), true},
      {"  added by the proxy, p99 (us)", added(&Samples::setup_us, 0.99), true},
      {"keep-alive request p50 (us)",
       [&](std::size_t i) { return pct(samples[i].request_us, 0.5); }, false},
      {"keep-alive request p99 (us)",
       [&](std::size_t i) { return pct(samples[i].request_us, 0.99); }, false},
      {"  added by the proxy, p50 (us)", added(&Samples::request_us, 0.5), true},
      {"  added by the proxy, p99 (us)", added(&Samples::request_us, 0.99), true},
      {"proxy RSS after the rounds (KiB)", kib(rss_bench), true},
      {"proxy RSS peak (VmHWM) after the rounds (KiB)", kib(hwm_bench), true},
      {"proxy RSS, 500 tunnels + 1,000 slow-loris (KiB)", kib(rss_loaded), true},
      {"proxy RSS 1.5 s after they closed (KiB)", kib(rss_closed), true},
  };
  for (const Row& r : rows) {
    std::printf("%-50s", r.what);
    std::vector<double> v(paths.size(), 0.0);
    for (std::size_t i = 0; i < paths.size(); ++i) {
      if (!(r.proxies_only && i == 0)) {
        v[i] = r.value(i);
        std::printf(" %10.0f", v[i]);
      } else {
        std::printf(" %10s", "-");
      }
    }
    for (std::size_t at : {srt_at, ref_at}) {
      if (at >= paths.size()) continue;
      if (v[at] > 0) {
        std::printf(" %9.2fx", v[1] / v[at]);
      } else {
        std::printf(" %10s", "-");
      }
    }
    if (!r.proxies_only && v[0] > 0) std::printf(" %11.2fx", v[1] / v[0]);
    std::printf("\n");
  }
  for (std::size_t i = 1; i < paths.size(); ++i) {
    const Load& l = loads[i];
    std::printf(
        "%s under load: %d/500 tunnels alive, fresh client %s in %.1f ms; fds %zu idle, %zu "
        "loaded, %zu after; failures in the rounds: %llu\n",
        paths[i].name.c_str(), l.alive, l.fresh_ok ? "served" : "NOT served", l.fresh_ms,
        l.fds_idle, l.fds, l.fds_after, static_cast<unsigned long long>(samples[i].failures));
  }
  for (std::size_t i = 1; i < paths.size(); ++i) {
    for (std::size_t r = 0; r < load_log[i].size(); ++r) {
      const Load& l = load_log[i][r];
      std::printf(
          "%s load round %zu: RSS %ld KiB loaded, %ld KiB after; fds %zu before, %zu after\n",
          paths[i].name.c_str(), r + 1, l.rss_kb, l.rss_after_kb, l.fds_idle, l.fds_after);
    }
    const RssParts& rp = parts_after[i];
    std::printf(
        "%s resident after the last round (KiB): heap %ld, anonymous %ld (%d maps), files %ld, "
        "other %ld\n",
        paths[i].name.c_str(), rp.heap_kb, rp.anon_kb, rp.anon_maps, rp.file_kb, rp.other_kb);
  }
  if (with_srt) {
    std::printf(
        "srt: the node process that runs its proxy (its socat bridges, for a sandbox, not "
        "counted)\n");
  }
}

}  // namespace
}  // namespace vigil::bench
