// Real clients inside a real `vigil run`, to ALLOWED hosts: curl over http, https (CONNECT
// to a loopback TLS server) and socks5h, `git clone` over http, python3 urllib. Inside the
// sandbox the clients only know HTTP_PROXY / ALL_PROXY (127.0.0.1:3128 and :1080, bridged
// by vigil-init to the session proxy's Unix socket); the test servers listen on the HOST's
// loopback, so the session proxy, on the host side, is what connects to them.
//
// Names resolve through `vigil run --test-resolve` (allowed.test -> 127.0.0.1) and
// --test-allow-loopback lets the proxy reach that loopback server; both need
// VIGIL_TEST_MODE=1. The address-guard test runs WITHOUT the loopback relaxation and
// shows the refusal. Every run writes its session log (--log) outside the sandbox's
// writable roots, and the net.decision records are checked there.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/integration/harness.h"
#include "tests/integration/proxy_harness.h"

namespace vigil::test {
namespace {

const char* kSettings = R"({
  "filesystem": {"allowWrite": ["."]},
  "network": {
    "allowedDomains": ["allowed.test", "*.pattern.test"],
    "deniedDomains": ["blocked.pattern.test"],
    "deniedDomainReasons": {"blocked.pattern.test": "blocked.pattern.test is retired; use allowed.test"}
  }
})";

const std::vector<std::string>& kTestResolve = kLoopbackTestResolve;

const std::map<std::string, std::string> kTestModeEnv = {{"VIGIL_TEST_MODE", "1"}};

// A git identity and no user/system config, for the host-side repository set-up.
const std::map<std::string, std::string> kGitEnv = {
    {"GIT_CONFIG_NOSYSTEM", "1"}, {"GIT_CONFIG_GLOBAL", "/dev/null"}, {"GIT_TERMINAL_PROMPT", "0"}};

// The session log's net.decision records, one string per record.
std::vector<std::string> decisions(const std::string& log) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < log.size()) {
    const std::size_t nl = log.find('\n', pos);
    std::string line = log.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    if (line.find(R"("src":"proxy","kind":"net.decision")") != std::string::npos)
      out.push_back(std::move(line));
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  return out;
}

// Counts the records that contain every fragment.
std::size_t count_with(const std::vector<std::string>& records,
                       const std::vector<std::string>& fragments) {
  std::size_t n = 0;
  for (const auto& r : records) {
    bool all = true;
    for (const auto& f : fragments) all = all && r.find(f) != std::string::npos;
    if (all) ++n;
  }
  return n;
}

class RunProxy : public ::testing::Test {
 protected:
  void SetUp() override {
    make_dirs(srv_ / "www");
    write_file(srv_ / "www/hello.txt", "hello through vigil run\n");
    write_file(cfg_ / "settings.json", kSettings);
    server_ = std::make_unique<FileServer>(srv_, srv_ / "www");
    ASSERT_NE(server_->port(), 0) << "python http.server did not start";
  }

  std::string site(const std::string& host, const std::string& path = "/hello.txt") const {
    return "http://" + host + ":" + std::to_string(server_->port()) + path;
  }

  // `vigil run` with the test options, the settings and a fresh session log in cfg_
  // (outside the sandbox's writable roots: ws_ is the working directory; vigil refuses
  // to append to an existing log).
  Outcome run(const std::vector<std::string>& command, bool allow_loopback = true) {
    log_ = cfg_ / ("session" + std::to_string(++runs_) + ".jsonl");
    std::vector<std::string> args = {"run", "--settings", cfg_ / "settings.json", "--log", log_};
    args.insert(args.end(), kTestResolve.begin(), kTestResolve.end());
    if (allow_loopback) args.push_back("--test-allow-loopback");
    args.push_back("--");
    args.insert(args.end(), command.begin(), command.end());
    return run_vigil(args, ws_.path(), 120, kTestModeEnv);
  }
  // The last run's session log.
  const std::string& log_path() const { return log_; }
  std::vector<std::string> logged() const { return decisions(read_file(log_path())); }

  TempDir ws_, cfg_, srv_;
  std::unique_ptr<FileServer> server_;
  int runs_ = 0;
  std::string log_;
};

TEST_F(RunProxy, CurlHttpReachesAnAllowedNameAndTheDecisionIsLogged) {
  const Outcome o = run({"curl", "-sS", "--max-time", "20", site("allowed.test")});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "hello through vigil run\n");
  EXPECT_NE(o.err.find("vigil: warning: TEST MODE: loopback addresses pass the address guard"),
            std::string::npos)
      << o.err;
  EXPECT_EQ(o.err.find("<sandbox_violations>"), std::string::npos) << o.err;
  EXPECT_NE(server_->log().find("GET /hello.txt HTTP/1.1"), std::string::npos) << server_->log();
  const auto d = logged();
  ASSERT_EQ(d.size(), 1u) << read_file(log_path());
  EXPECT_EQ(count_with(d, {R"("proto":"http","host":"allowed.test")", R"("verdict":"allowed")",
                           R"("rule":"allowed.test")", R"("address":"127.0.0.1")"}),
            1u)
      << d[0];
  // The chain of the log that recorded it is intact.
  const Outcome verify = run_vigil({"replay", log_path(), "--verify"}, ws_.path(), 30);
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

TEST_F(RunProxy, CurlHttpsThroughConnect) {
  std::string cert, key;
  ASSERT_TRUE(make_cert(srv_, "allowed.test", &cert, &key));
  FileServer tls(srv_, srv_ / "www", cert, key);
  ASSERT_NE(tls.port(), 0);
  // The certificate lives on the host's /tmp; reads are open in the sandbox.
  const Outcome o = run({"curl", "-sS", "--max-time", "20", "--cacert", cert,
                         "https://allowed.test:" + std::to_string(tls.port()) + "/hello.txt"});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "hello through vigil run\n");
  EXPECT_EQ(
      count_with(logged(), {R"("proto":"connect","host":"allowed.test")",
                            R"("port":)" + std::to_string(tls.port()), R"("verdict":"allowed")"}),
      1u)
      << read_file(log_path());
}

TEST_F(RunProxy, CurlSocks5hAllowedAndRefused) {
  // ALL_PROXY is set too, but curl prefers HTTP_PROXY for http:// URLs: name SOCKS here.
  const Outcome o = run({"curl", "-sS", "--max-time", "20", "--proxy", "socks5h://127.0.0.1:1080",
                         site("x.pattern.test")});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "hello through vigil run\n");
  EXPECT_EQ(count_with(logged(), {R"("proto":"socks5","host":"x.pattern.test")",
                                  R"("verdict":"allowed")", R"("rule":"*.pattern.test")"}),
            1u)
      << read_file(log_path());

  // Refused: SOCKS5 reply 0x02 ("connection not allowed by ruleset"), which curl reports.
  const Outcome r = run({"curl", "-sS", "--max-time", "20", "--proxy", "socks5h://127.0.0.1:1080",
                         site("denied.test")});
  EXPECT_EQ(r.exit_code, 97) << r.err;
  EXPECT_NE(r.err.find("(2)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("deny network-outbound denied.test:" + std::to_string(server_->port()) +
                       " (host is not on the allow list; to allow it, add \"denied.test:" +
                       std::to_string(server_->port()) + "\" to network.allowedDomains)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(count_with(logged(), {R"("proto":"socks5","host":"denied.test")",
                                  R"("verdict":"denied")", R"("refused_by":"not-allowed")"}),
            1u)
      << read_file(log_path());
}

TEST_F(RunProxy, RefusedNameGets403WithHeaderAndReason) {
  const Outcome o = run({"curl", "-sS", "-i", "--max-time", "20", site("blocked.pattern.test")});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out.rfind("HTTP/1.1 403 blocked.pattern.test is retired; use allowed.test\r\n", 0),
            0u)
      << o.out;
  EXPECT_NE(o.out.find("X-Proxy-Error: blocked-by-allowlist\r\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("Connection blocked by network allowlist: blocked.pattern.test is retired; "
                       "use allowed.test"),
            std::string::npos)
      << o.out;
  // The model is told, with the sanctioned alternative.
  EXPECT_NE(o.err.find("<sandbox_violations>"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("blocked.pattern.test is retired; use allowed.test"), std::string::npos)
      << o.err;
  EXPECT_EQ(server_->log(), "") << "a refused request reached the server";
  EXPECT_EQ(
      count_with(logged(), {R"("host":"blocked.pattern.test")", R"("verdict":"denied")",
                            R"("rule":"blocked.pattern.test")", R"("refused_by":"denied-domain")"}),
      1u)
      << read_file(log_path());
}

TEST_F(RunProxy, RefusedHttpsConnectCarriesTheReasonInTheStatusLine) {
  const Outcome o = run({"curl", "-sS", "-v", "--max-time", "20", "https://denied.test:443/"});
  EXPECT_EQ(o.exit_code, 56) << o.err;  // curl: CONNECT refused by the proxy
  EXPECT_NE(o.err.find("< HTTP/1.1 403 host is not on the allow list"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("< X-Proxy-Error: blocked-by-allowlist"), std::string::npos) << o.err;
  EXPECT_EQ(count_with(logged(), {R"("proto":"connect","host":"denied.test","port":443)",
                                  R"("verdict":"denied")"}),
            1u)
      << read_file(log_path());
}

TEST_F(RunProxy, PythonUrllibAllowedAndRefused) {
  // urllib reads http_proxy from the environment vigil set: no proxy in the script.
  write_file(ws_ / "client.py", R"PY(
import sys, urllib.request, urllib.error
print(urllib.request.urlopen(sys.argv[1], timeout=20).read().decode(), end="")
try:
    urllib.request.urlopen(sys.argv[2], timeout=20)
except urllib.error.HTTPError as e:
    print("refused", e.code, e.reason, e.headers.get("X-Proxy-Error"))
)PY");
  const Outcome o =
      run({python3(), "client.py", site("allowed.test"), site("denied.test", "/other.txt")});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out,
            "hello through vigil run\n"
            "refused 403 host is not on the allow list blocked-by-allowlist\n");
  const auto d = logged();
  EXPECT_EQ(count_with(d, {R"("host":"allowed.test")", R"("verdict":"allowed")"}), 1u);
  EXPECT_EQ(count_with(d, {R"("host":"denied.test")", R"("verdict":"denied")"}), 1u);
}

TEST_F(RunProxy, GitCloneOverHttp) {
  // A "dumb" http repository on the host: a bare clone with its info/refs index.
  const std::string src = srv_ / "src";
  make_dirs(src);
  write_file(src + "/README", "cloned through vigil run\n");
  for (const auto& argv : std::vector<std::vector<std::string>>{
           {"git", "-C", src, "init", "-q"},
           {"git", "-C", src, "add", "README"},
           {"git", "-C", src, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"},
           {"git", "clone", "-q", "--bare", src, srv_ / "www/repo.git"},
           {"git", "-C", srv_ / "www/repo.git", "update-server-info"}}) {
    ASSERT_EQ(run_program(argv, srv_.path(), 60, kGitEnv).exit_code, 0) << argv[1];
  }
  // Inside the sandbox git finds http_proxy in its environment; the clone lands in the
  // working directory (writable).
  const Outcome o = run({"git", "clone", "-q", site("allowed.test", "/repo.git"), "out"});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(read_file(ws_ / "out/README"), "cloned through vigil run\n");
  EXPECT_GE(
      count_with(logged(), {R"("proto":"http","host":"allowed.test")", R"("verdict":"allowed")"}),
      2u)
      << "one decision per request (info/refs, objects...): " << read_file(log_path());

  const Outcome refused = run({"git", "clone", "-q", site("denied.test", "/repo.git"), "out2"});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("403"), std::string::npos) << refused.err;
  EXPECT_FALSE(exists(ws_ / "out2/README"));
}

// The address guard ON (no --test-allow-loopback): a name the allow list allows, by exact
// entry or by pattern, that resolves to 127.0.0.1 is refused, over HTTP and SOCKS, and the
// server is never contacted.
TEST_F(RunProxy, AllowedNameResolvingToLoopbackIsRefusedByTheAddressGuard) {
  for (const std::string host : {"allowed.test", "x.pattern.test"}) {
    SCOPED_TRACE(host);
    const Outcome o =
        run({"curl", "-sS", "-i", "--max-time", "20", site(host)}, /*allow_loopback=*/false);
    EXPECT_EQ(o.exit_code, 0) << o.err;
    EXPECT_EQ(o.err.find("loopback addresses pass the address guard"), std::string::npos) << o.err;
    EXPECT_EQ(o.out.rfind("HTTP/1.1 403 address guard: " + host +
                              " resolves to 127.0.0.1, a loopback address\r\n",
                          0),
              0u)
        << o.out;
    EXPECT_NE(o.out.find("X-Proxy-Error: blocked-by-allowlist"), std::string::npos) << o.out;
    EXPECT_EQ(
        count_with(logged(), {"\"host\":\"" + host + "\"", R"("verdict":"denied")",
                              R"("refused_by":"address-guard")", R"("guard_check":"loopback")"}),
        1u)
        << read_file(log_path());

    const Outcome s =
        run({"curl", "-sS", "--max-time", "20", "--proxy", "socks5h://127.0.0.1:1080", site(host)},
            /*allow_loopback=*/false);
    EXPECT_EQ(s.exit_code, 97) << s.err;
    EXPECT_EQ(count_with(logged(), {R"("proto":"socks5")", R"("refused_by":"address-guard")"}), 1u)
        << read_file(log_path());
  }
  EXPECT_EQ(server_->log(), "") << "the guard let a request reach the loopback server";
}

TEST(RunProxyCli, TestOptionsNeedTestModeAndNothingRuns) {
  TempDir ws;
  for (const auto& opt : std::vector<std::vector<std::string>>{
           {"--test-allow-loopback"}, {"--test-resolve", "a.test=127.0.0.1"}}) {
    std::vector<std::string> args = {"run"};
    args.insert(args.end(), opt.begin(), opt.end());
    args.insert(args.end(), {"--", "touch", "ran"});
    const Outcome o = run_vigil(args, ws.path(), 30);
    EXPECT_EQ(o.exit_code, 2) << o.err;
    EXPECT_NE(o.err.find("refused unless VIGIL_TEST_MODE=1"), std::string::npos) << o.err;
    EXPECT_FALSE(exists(ws / "ran")) << "the command must not run";
  }
  // A malformed table entry is a usage error too, also in test mode.
  const Outcome bad = run_vigil({"run", "--test-resolve", "a.test=not-an-ip", "--", "true"},
                                ws.path(), 30, kTestModeEnv);
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("--test-resolve a.test=not-an-ip: not an IP address list"),
            std::string::npos)
      << bad.err;
}

// The sandbox has its own network namespace, so its loopback is its own: a server the
// command starts and a client in the same command talk directly (NO_PROXY names the
// loopback), without the proxy refusing it or a hint to allow 127.0.0.1.
TEST(RunLoopback, AServerInsideTheCommandIsReachable) {
  if (!exists("/usr/bin/python3") || !exists("/usr/bin/curl"))
    GTEST_SKIP() << "needs /usr/bin/python3 and /usr/bin/curl";
  TempDir ws;
  const std::string script =
      "/usr/bin/python3 -m http.server 8766 --bind 127.0.0.1 >/dev/null 2>&1 & server=$!; "
      "i=0; until curl -s -o /dev/null http://127.0.0.1:8766/ || [ $i -ge 100 ]; do "
      "i=$((i+1)); sleep 0.1; done; "
      "curl -s -o /dev/null -w '%{http_code} ' http://127.0.0.1:8766/; "
      "curl -s -o /dev/null -w '%{http_code}' http://localhost:8766/; kill $server";
  auto o = run_vigil({"run", "--", "sh", "-c", script}, ws.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "200 200") << o.err;
  EXPECT_EQ(o.err.find("allowedDomains"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("sandbox_violations"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace vigil::test
