// Real clients through the real `vigil proxy`, every server on 127.0.0.1: curl over
// http, https (CONNECT to a local TLS server) and socks5h, `git clone` over http, python3
// urllib. Names resolve through --test-resolve (allowed.test -> 127.0.0.1), and
// --test-allow-loopback lets that loopback server be reached; both need
// VIGIL_TEST_MODE=1. The guard test runs WITHOUT the relaxation and shows the refusal.
#include <gtest/gtest.h>

#include <string>

#include "supervisor/core/events/event_schema.h"
#include "tests/integration/harness.h"
#include "tests/integration/proxy_harness.h"

namespace vigil::test {
namespace {

const char* kSettings = R"({
  "network": {
    "allowedDomains": ["allowed.test", "*.pattern.test"],
    "deniedDomains": ["blocked.pattern.test"],
    "deniedDomainReasons": {"blocked.pattern.test": "blocked.pattern.test is retired; use allowed.test"}
  }
})";

const std::vector<std::string>& kTestResolve = kLoopbackTestResolve;

// Every line `vigil proxy` wrote is a schema v1 record the supervisor's own reader accepts
// (net.* from the proxy), chained from the genesis `prev`. Returns how many.
std::size_t expect_schema_v1_records(const std::string& ev) {
  std::size_t n = 0;
  std::size_t pos = 0;
  while (pos < ev.size()) {
    const std::size_t nl = ev.find('\n', pos);
    EXPECT_NE(nl, std::string::npos) << "an unterminated line: " << ev.substr(pos);
    if (nl == std::string::npos) break;
    const std::string line = ev.substr(pos, nl - pos);
    auto e = events::parse_log_record(line);
    EXPECT_TRUE(e.ok()) << line << "\n" << (e.ok() ? "" : e.error().message);
    if (e.ok()) {
      EXPECT_EQ(e->src, events::Source::kProxy) << line;
      EXPECT_EQ(e->seq, n) << line;
      if (n == 0) {
        EXPECT_EQ(e->prev, events::kGenesisPrev) << line;
      }
    }
    ++n;
    pos = nl + 1;
  }
  return n;
}

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

class ProxyClients : public ::testing::Test {
 protected:
  void SetUp() override {
    make_dirs(tmp_ / "www");
    write_file(tmp_ / "www/hello.txt", "hello through vigil\n");
    server_ = std::make_unique<FileServer>(tmp_, tmp_ / "www");
    ASSERT_NE(server_->port(), 0) << "python http.server did not start";
    proxy_ = std::make_unique<ProxyProcess>(tmp_, kSettings,
                                            with(kTestResolve, {"--test-allow-loopback"}));
    ASSERT_TRUE(proxy_->ready()) << proxy_->err();
  }
  std::string site(const std::string& host, const std::string& path = "/hello.txt") const {
    return "http://" + host + ":" + std::to_string(server_->port()) + path;
  }

  TempDir tmp_;
  std::unique_ptr<FileServer> server_;
  std::unique_ptr<ProxyProcess> proxy_;
};

TEST_F(ProxyClients, CurlHttpReachesAnAllowedName) {
  const Outcome o = run_program(
      {"curl", "-sS", "--max-time", "20", "-x", proxy_->url(), site("allowed.test")}, tmp_.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "hello through vigil\n");
  const std::string ev = proxy_->events();
  EXPECT_NE(ev.find(R"("kind":"net.decision","proto":"http","host":"allowed.test")"),
            std::string::npos)
      << ev;
  EXPECT_NE(ev.find(R"("verdict":"allowed")"), std::string::npos) << ev;
  EXPECT_NE(ev.find(R"("address":"127.0.0.1")"), std::string::npos) << ev;
  EXPECT_EQ(expect_schema_v1_records(ev), 1u) << ev;
}

TEST_F(ProxyClients, CurlHttpAllowedByPatternAndKeepAlive) {
  // Two URLs on one curl command: one client connection, a decision for each request.
  const Outcome o = run_program({"curl", "-sS", "-v", "--max-time", "20", "-x", proxy_->url(),
                                 site("x.pattern.test"), site("allowed.test")},
                                tmp_.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "hello through vigil\nhello through vigil\n");
  EXPECT_NE(o.err.find("Re-using existing connection"), std::string::npos) << o.err;
  const std::string ev = proxy_->events();
  EXPECT_EQ(count_lines_containing(ev, R"("verdict":"allowed")"), 2u) << ev;
  EXPECT_NE(ev.find(R"("rule":"*.pattern.test")"), std::string::npos) << ev;
}

TEST_F(ProxyClients, CurlHttpsThroughConnect) {
  std::string cert, key;
  ASSERT_TRUE(make_cert(tmp_, "allowed.test", &cert, &key));
  FileServer tls(tmp_, tmp_ / "www", cert, key);
  ASSERT_NE(tls.port(), 0);
  const Outcome o =
      run_program({"curl", "-sS", "--max-time", "20", "--cacert", cert, "-x", proxy_->url(),
                   "https://allowed.test:" + std::to_string(tls.port()) + "/hello.txt"},
                  tmp_.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "hello through vigil\n");
  EXPECT_NE(proxy_->events().find(R"("proto":"connect","host":"allowed.test")"), std::string::npos);
}

TEST_F(ProxyClients, CurlSocks5h) {
  const Outcome o =
      run_program({"curl", "-sS", "--max-time", "20", "--proxy",
                   "socks5h://127.0.0.1:" + std::to_string(proxy_->port()), site("allowed.test")},
                  tmp_.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "hello through vigil\n");
  EXPECT_NE(proxy_->events().find(R"("proto":"socks5","host":"allowed.test")"), std::string::npos);
}

TEST_F(ProxyClients, PythonUrllib) {
  const std::string script = R"PY(
import sys, urllib.request, urllib.error
opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": sys.argv[1]}))
print(opener.open(sys.argv[2], timeout=20).read().decode(), end="")
try:
    opener.open(sys.argv[3], timeout=20)
except urllib.error.HTTPError as e:
    print("refused", e.code, e.reason, e.headers.get("X-Proxy-Error"))
)PY";
  write_file(tmp_ / "client.py", script);
  const Outcome o = run_program(
      {python3(), tmp_ / "client.py", proxy_->url(), site("allowed.test"), site("denied.test")},
      tmp_.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(
      o.out,
      "hello through vigil\nrefused 403 host is not on the allow list blocked-by-allowlist\n");
}

TEST_F(ProxyClients, GitCloneOverHttp) {
  const std::map<std::string, std::string> env = {
      {"HOME", tmp_.path()}, {"GIT_CONFIG_NOSYSTEM", "1"}, {"GIT_TERMINAL_PROMPT", "0"}};
  const std::string src = tmp_ / "src";
  make_dirs(src);
  write_file(src + "/README", "cloned through vigil\n");
  ASSERT_EQ(run_program({"git", "-C", src, "init", "-q"}, tmp_.path(), 60, env).exit_code, 0);
  ASSERT_EQ(run_program({"git", "-C", src, "add", "README"}, tmp_.path(), 60, env).exit_code, 0);
  ASSERT_EQ(run_program({"git", "-C", src, "-c", "user.name=t", "-c", "user.email=t@t", "commit",
                         "-qm", "one"},
                        tmp_.path(), 60, env)
                .exit_code,
            0);
  // A "dumb" http repository: a bare clone with its info/refs index, served as files.
  ASSERT_EQ(run_program({"git", "clone", "-q", "--bare", src, tmp_ / "www/repo.git"}, tmp_.path(),
                        60, env)
                .exit_code,
            0);
  ASSERT_EQ(
      run_program({"git", "-C", tmp_ / "www/repo.git", "update-server-info"}, tmp_.path(), 60, env)
          .exit_code,
      0);
  const Outcome o = run_program({"git", "-c", "http.proxy=" + proxy_->url(), "clone", "-q",
                                 site("allowed.test", "/repo.git"), tmp_ / "out"},
                                tmp_.path(), 120, env);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(read_file(tmp_ / "out/README"), "cloned through vigil\n");
  // And a refused name fails the clone with the proxy's reason visible.
  const Outcome refused = run_program({"git", "-c", "http.proxy=" + proxy_->url(), "clone", "-q",
                                       site("denied.test", "/repo.git"), tmp_ / "out2"},
                                      tmp_.path(), 120, env);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("403"), std::string::npos) << refused.err;
}

TEST_F(ProxyClients, RefusedNameGets403WithHeaderAndReason) {
  const Outcome o = run_program(
      {"curl", "-sS", "-i", "--max-time", "20", "-x", proxy_->url(), site("blocked.pattern.test")},
      tmp_.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out.rfind("HTTP/1.1 403 blocked.pattern.test is retired; use allowed.test\r\n", 0),
            0u)
      << o.out;
  EXPECT_NE(o.out.find("X-Proxy-Error: blocked-by-allowlist\r\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("Connection blocked by network allowlist: blocked.pattern.test is retired; "
                       "use allowed.test"),
            std::string::npos);
  const std::string ev = proxy_->events();
  EXPECT_NE(ev.find(R"("verdict":"denied","rule":"blocked.pattern.test")"), std::string::npos) << ev;
  EXPECT_NE(ev.find(R"("refused_by":"denied-domain")"), std::string::npos) << ev;
  EXPECT_EQ(expect_schema_v1_records(ev), 1u) << ev;
}

TEST_F(ProxyClients, RefusedHttpsConnectCarriesTheReasonInTheStatusLine) {
  const Outcome o = run_program(
      {"curl", "-sS", "-v", "--max-time", "20", "-x", proxy_->url(), "https://denied.test:443/"},
      tmp_.path());
  EXPECT_EQ(o.exit_code, 56) << o.err;  // curl: CONNECT refused by the proxy
  EXPECT_NE(o.err.find("< HTTP/1.1 403 host is not on the allow list"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("< X-Proxy-Error: blocked-by-allowlist"), std::string::npos) << o.err;
}

TEST_F(ProxyClients, RefusedSocksGetsReply0x02) {
  // Byte-exact: greeting, then CONNECT denied.test:80.
  UniqueFd c = tcp_connect_loopback(proxy_->port());
  ASSERT_TRUE(c);
  std::string req = {5, 1, 0, 5, 1, 0, 3, 11};
  req += "denied.test";
  req += std::string("\x00\x50", 2);
  const std::string r = exchange(c.get(), req);
  EXPECT_EQ(r, std::string("\x05\x00\x05\x02\x00\x01\x00\x00\x00\x00\x00\x00", 12));
  // curl reports the same refusal.
  const Outcome o =
      run_program({"curl", "-sS", "--max-time", "20", "--proxy",
                   "socks5h://127.0.0.1:" + std::to_string(proxy_->port()), site("denied.test")},
                  tmp_.path());
  EXPECT_EQ(o.exit_code, 97) << o.err;
  EXPECT_NE(o.err.find("(2)"), std::string::npos) << o.err;
}

// The address guard ON (no --test-allow-loopback): a name the allow list allows — by
// exact entry or by pattern — that resolves to 127.0.0.1 is refused, and the server is
// never contacted.
TEST(ProxyGuard, AllowedNameResolvingToLoopbackIsRefused) {
  TempDir tmp;
  make_dirs(tmp / "www");
  write_file(tmp / "www/hello.txt", "must not be served\n");
  FileServer server(tmp, tmp / "www");
  ASSERT_NE(server.port(), 0);
  ProxyProcess proxy(tmp, kSettings, kTestResolve);
  ASSERT_TRUE(proxy.ready()) << proxy.err();
  const std::string port = std::to_string(server.port());
  for (const std::string host : {"allowed.test", "x.pattern.test"}) {
    SCOPED_TRACE(host);
    const Outcome o = run_program({"curl", "-sS", "-i", "--max-time", "20", "-x", proxy.url(),
                                   "http://" + host + ":" + port + "/hello.txt"},
                                  tmp.path());
    EXPECT_EQ(o.exit_code, 0) << o.err;
    EXPECT_EQ(o.out.rfind("HTTP/1.1 403 address guard: " + host +
                              " resolves to 127.0.0.1, a loopback address\r\n",
                          0),
              0u)
        << o.out;
    EXPECT_NE(o.out.find("X-Proxy-Error: blocked-by-allowlist"), std::string::npos);
    const Outcome s = run_program({"curl", "-sS", "--max-time", "20", "--proxy",
                                   "socks5h://127.0.0.1:" + std::to_string(proxy.port()),
                                   "http://" + host + ":" + port + "/hello.txt"},
                                  tmp.path());
    EXPECT_EQ(s.exit_code, 97) << s.err;
  }
  EXPECT_EQ(server.log(), "") << "the guard let a request reach the loopback server";
  const std::string ev = proxy.events();
  EXPECT_EQ(count_lines_containing(ev, R"("refused_by":"address-guard")"), 4u) << ev;
  EXPECT_EQ(count_lines_containing(ev, R"("guard_check":"loopback")"), 4u) << ev;
}

TEST(ProxyCli, TestOptionsNeedTestMode) {
  TempDir tmp;
  write_file(tmp / "s.json", kSettings);
  for (const auto& opt : std::vector<std::vector<std::string>>{
           {"--test-allow-loopback"}, {"--test-resolve", "a.test=127.0.0.1"}}) {
    const Outcome o =
        run_vigil(with({"proxy", "--settings", tmp / "s.json", "--listen", "tcp:127.0.0.1:0"}, opt),
                  tmp.path(), 20);
    EXPECT_EQ(o.exit_code, 2);
    EXPECT_NE(o.err.find("refused unless VIGIL_TEST_MODE=1"), std::string::npos) << o.err;
  }
}

TEST(ProxyCli, BadInputsExit2WithTheReason) {
  TempDir tmp;
  write_file(tmp / "bad.json", R"({"network": {"allowedDomains": ["ok.test", "*.com"]}})");
  write_file(tmp / "cidr.json", R"({"network": {"deniedResolvedAddresses": ["10.0.0.0/40"]}})");
  write_file(tmp / "good.json", kSettings);
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--settings", tmp / "bad.json", "--listen", "tcp:127.0.0.1:0"},
       "network.allowedDomains[1]"},
      {{"--settings", tmp / "cidr.json", "--listen", "tcp:127.0.0.1:0"},
       "network.deniedResolvedAddresses[0]"},
      {{"--settings", tmp / "missing.json", "--listen", "tcp:127.0.0.1:0"}, "missing.json"},
      {{"--settings", tmp / "good.json", "--listen", "tcp:0.0.0.0:3128"}, "loopback only"},
      {{"--settings", tmp / "good.json", "--listen", "unix:relative"}, "absolute"},
      {{"--settings", tmp / "good.json"}, "--listen"},
  };
  for (const auto& c : cases) {
    const Outcome o = run_vigil(with({"proxy"}, c.args), tmp.path(), 20);
    EXPECT_EQ(o.exit_code, 2) << o.err;
    EXPECT_NE(o.err.find(c.message), std::string::npos) << o.err;
  }
}

TEST(ProxyCli, UnixSocketAndGracefulSignal) {
  TempDir tmp;
  const std::string sock = tmp / "proxy.sock";
  ProxyProcess proxy(tmp, kSettings, {}, "unix:" + sock, false);
  ASSERT_TRUE(proxy.ready()) << proxy.err();
  EXPECT_TRUE(exists(sock));
  {
    UniqueFd c = unix_connect(sock);
    ASSERT_TRUE(c);
    const std::string r = exchange(c.get(), "CONNECT nope.test:443 HTTP/1.1\r\n\r\n");
    EXPECT_EQ(r.rfind("HTTP/1.1 403 host is not on the allow list\r\n", 0), 0u) << r;
  }
  {
    UniqueFd c = unix_connect(sock);
    const std::string r = exchange(c.get(), std::string("\x04\x01\x00\x50\x01\x02\x03\x04\x00", 9));
    EXPECT_EQ(r, std::string("\x00\x5b\x00\x00\x00\x00\x00\x00", 8));
  }
  EXPECT_EQ(proxy.process().signal_and_wait(SIGTERM), 0) << proxy.err();
  EXPECT_FALSE(exists(sock)) << "socket file left behind";
  const std::string ev = proxy.events();
  EXPECT_NE(ev.find(R"("proto":"connect","host":"nope.test")"), std::string::npos) << ev;
  EXPECT_NE(ev.find(R"("proto":"socks4")"), std::string::npos) << ev;
  // The envelope first, numbered as schema v1 numbers a session's records: from 0.
  EXPECT_EQ(ev.rfind(R"({"v":1,"seq":0,"t":)", 0), 0u) << ev;
  EXPECT_EQ(expect_schema_v1_records(ev), 2u) << ev;
}

}  // namespace
}  // namespace vigil::test
