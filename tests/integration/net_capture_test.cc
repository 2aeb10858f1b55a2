// vigil.network.capture with real clients that ignore the proxy variables, inside a real
// `vigil run`: their names resolve through vigil-init's DNS stub (a fake address), their
// connect() is trapped and carried through the session proxy, which decides it by the
// same allowlist and records it as captured. The test server listens on the HOST's
// loopback, where only the proxy (on the host side, --test-allow-loopback) can reach it:
// a client that got through reached it only through the proxy. Every name resolves to
// 127.0.0.1 (--test-resolve); no test here aims at any other address.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "tests/integration/harness.h"
#include "tests/integration/proxy_harness.h"

namespace vigil::test {
namespace {

const char* kSettings = R"({
  "filesystem": {"allowWrite": ["."]},
  "network": {"allowedDomains": ["allowed.test"]},
  "vigil": {"network": {"capture": true}}
})";

const std::map<std::string, std::string> kTestModeEnv = {{"VIGIL_TEST_MODE", "1"}};

// A python client that ignores every proxy variable: getaddrinfo + a raw socket.
const char* kPyClient = R"PY(
import socket, sys
host, port = sys.argv[1], int(sys.argv[2])
try:
    s = socket.create_connection((host, port), timeout=20)
except OSError as e:
    print("refused", type(e).__name__, e.errno); sys.exit(3)
s.sendall(b"GET /hello.txt HTTP/1.0\r\nHost: " + host.encode() + b"\r\n\r\n")
data = b""
while True:
    chunk = s.recv(65536)
    if not chunk: break
    data += chunk
print(data.split(b"\r\n\r\n", 1)[1].decode(), end="")
)PY";

// node's net.connect (libuv: a non-blocking connect in an event loop).
const char* kNodeClient = R"JS(
const net = require('net');
const [host, port] = process.argv.slice(2);
const s = net.connect({host, port: Number(port)}, () => {
  s.write(`GET /hello.txt HTTP/1.0\r\nHost: ${host}\r\n\r\n`);
});
let data = '';
s.on('data', d => { data += d; });
s.on('end', () => { process.stdout.write(data.split('\r\n\r\n')[1]); });
s.on('error', e => { console.log('refused', e.code); process.exit(3); });
)JS";

// python asyncio's open_connection (a non-blocking connect in asyncio's loop).
const char* kAsyncioClient = R"PY(
import asyncio, sys
async def main(host, port):
    try:
        r, w = await asyncio.open_connection(host, port)
    except OSError as e:
        print("refused", type(e).__name__); sys.exit(3)
    w.write(b"GET /hello.txt HTTP/1.0\r\nHost: " + host.encode() + b"\r\n\r\n")
    data = await r.read()
    print(data.split(b"\r\n\r\n", 1)[1].decode(), end="")
asyncio.run(main(sys.argv[1], int(sys.argv[2])))
)PY";

// node missing: a failure where tools are required (CI), else a skip that says why.
bool node_missing() {
  if (run_program({"sh", "-c", "command -v node"}, "/tmp", 10).exit_code == 0) return false;
  const char* r = std::getenv("VIGIL_REQUIRE_TOOLS");
  EXPECT_FALSE(r != nullptr && std::string(r) == "1")
      << "node is missing (tools/bootstrap.sh installs it)";
  return true;
}

std::vector<std::string> net_decisions(const std::string& log) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < log.size()) {
    const std::size_t nl = log.find('\n', pos);
    std::string line = log.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    if (line.find(R"("kind":"net.decision")") != std::string::npos) out.push_back(std::move(line));
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  return out;
}

class NetCapture : public ::testing::Test {
 protected:
  void SetUp() override {
    make_dirs(srv_ / "www");
    write_file(srv_ / "www/hello.txt", "hello through capture\n");
    write_file(cfg_ / "settings.json", kSettings);
    write_file(ws_ / "client.py", kPyClient);
    write_file(ws_ / "client.js", kNodeClient);
    write_file(ws_ / "aclient.py", kAsyncioClient);
    server_ = std::make_unique<FileServer>(srv_, srv_ / "www");
    ASSERT_NE(server_->port(), 0) << "python http.server did not start";
  }
  std::string port() const { return std::to_string(server_->port()); }

  Outcome run(const std::vector<std::string>& command) {
    log_ = cfg_ / ("session" + std::to_string(++runs_) + ".jsonl");
    std::vector<std::string> args = {"run", "--settings", cfg_ / "settings.json", "--log", log_};
    args.insert(args.end(), kLoopbackTestResolve.begin(), kLoopbackTestResolve.end());
    args.push_back("--test-allow-loopback");
    args.push_back("--");
    args.insert(args.end(), command.begin(), command.end());
    return run_vigil(args, ws_.path(), 120, kTestModeEnv);
  }
  std::vector<std::string> decisions() const { return net_decisions(read_file(log_)); }

  // The client reached the allowed name through the proxy, and the record says captured.
  void expect_reached(const Outcome& o, const std::string& program) {
    EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
    EXPECT_EQ(o.out, "hello through capture\n") << o.err;
    EXPECT_NE(server_->log().find("GET /hello.txt"), std::string::npos) << server_->log();
    const auto d = decisions();
    ASSERT_EQ(d.size(), 1u) << read_file(log_);
    EXPECT_NE(d[0].find(R"("host":"allowed.test")"), std::string::npos) << d[0];
    EXPECT_NE(d[0].find(R"("verdict":"allowed")"), std::string::npos) << d[0];
    EXPECT_NE(d[0].find(R"("captured":true)"), std::string::npos) << d[0];
    EXPECT_NE(d[0].find(R"("program":")" + program), std::string::npos) << d[0];
  }
  // Refused at connect, with the block line naming host:port and the key to add.
  void expect_refused(const Outcome& o) {
    EXPECT_EQ(o.exit_code, 3) << o.out << o.err;
    EXPECT_NE(o.out.find("refused"), std::string::npos) << o.out << o.err;
    EXPECT_NE(o.err.find("denied.test:" + port()), std::string::npos) << o.err;
    EXPECT_NE(o.err.find("network.allowedDomains"), std::string::npos) << o.err;
    // One per address the client tries (the name has an AAAA and an A): each refused.
    const auto d = decisions();
    ASSERT_GE(d.size(), 1u) << read_file(log_);
    for (const auto& r : d) {
      EXPECT_NE(r.find(R"("host":"denied.test")"), std::string::npos) << r;
      EXPECT_NE(r.find(R"("verdict":"denied")"), std::string::npos) << r;
      EXPECT_NE(r.find(R"("captured":true)"), std::string::npos) << r;
    }
    // The block says once that the program ignored the proxy settings.
    const std::size_t note = o.err.find("ignored the proxy settings");
    EXPECT_NE(note, std::string::npos) << o.err;
    EXPECT_EQ(o.err.find("ignored the proxy settings", note + 1), std::string::npos) << o.err;
    EXPECT_EQ(server_->log().find("GET /hello.txt"), std::string::npos) << server_->log();
  }

  TempDir ws_, cfg_, srv_;
  std::unique_ptr<FileServer> server_;
  int runs_ = 0;
  std::string log_;
};

TEST_F(NetCapture, PythonRawSocketReachesAnAllowedName) {
  expect_reached(run({python3(), "client.py", "allowed.test", port()}), "python3");
}

TEST_F(NetCapture, PythonRawSocketIsRefusedForADeniedName) {
  const Outcome o = run({python3(), "client.py", "denied.test", port()});
  expect_refused(o);
  EXPECT_NE(o.out.find("ConnectionRefusedError"), std::string::npos) << o.out;
}

TEST_F(NetCapture, PythonAsyncioNonBlockingConnect) {
  expect_reached(run({python3(), "aclient.py", "allowed.test", port()}), "python3");
}

TEST_F(NetCapture, PythonAsyncioRefused) {
  expect_refused(run({python3(), "aclient.py", "denied.test", port()}));
}

TEST_F(NetCapture, NodeNetConnectReachesAnAllowedName) {
  if (node_missing()) GTEST_SKIP() << "node is missing (tools/bootstrap.sh installs it)";
  expect_reached(run({"node", "client.js", "allowed.test", port()}), "node");
}

TEST_F(NetCapture, NodeNetConnectIsRefusedForADeniedName) {
  if (node_missing()) GTEST_SKIP() << "node is missing (tools/bootstrap.sh installs it)";
  expect_refused(run({"node", "client.js", "denied.test", port()}));
}

TEST_F(NetCapture, CurlNoProxyReachesAnAllowedName) {
  const Outcome o = run({"curl", "-sS", "--noproxy", "*", "--max-time", "20",
                         "http://allowed.test:" + port() + "/hello.txt"});
  expect_reached(o, "curl");
}

TEST_F(NetCapture, CurlThroughTheProxyVariablesIsNotCapturedTwice) {
  // The proxy variables honoured: the bridge's 127.0.0.1:3128 is loopback, direct; one
  // decision, made by the ordinary listener (not captured).
  const Outcome o = run({"curl", "-sS", "--max-time", "20",
                         "http://allowed.test:" + port() + "/hello.txt"});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "hello through capture\n");
  const auto d = decisions();
  ASSERT_EQ(d.size(), 1u) << read_file(log_);
  EXPECT_EQ(d[0].find(R"("captured")"), std::string::npos) << d[0];
}

// Every route from inside to the host's loopback: each loopback spelling is the sandbox's
// own loopback (direct, nothing listens there), UDP goes nowhere, DNS over TCP reaches
// the sandbox's own stub, and the
// host listener sees nothing; nothing is carried to the proxy (no net.decision at all).
TEST_F(NetCapture, NoRouteReachesTheHostsLoopback) {
  const char* probe = R"PY(
import socket, sys
port = int(sys.argv[1])
for fam, host in [(socket.AF_INET, "127.0.0.1"), (socket.AF_INET, "127.1"),
                  (socket.AF_INET, "2130706433"), (socket.AF_INET, "0x7f000001"),
                  (socket.AF_INET, "0.0.0.0"), (socket.AF_INET6, "::1"),
                  (socket.AF_INET6, "::ffff:127.0.0.1"), (socket.AF_INET6, "::")]:
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(5)
    try:
        addr = socket.getaddrinfo(host, port, fam, socket.SOCK_STREAM)[0][4]
        s.connect(addr); print("CONNECTED", host)
    except OSError as e:
        print("no", host, e.errno)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.sendto(b"x", ("127.0.0.1", port))
t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
t.settimeout(5)
try:
    t.connect(("127.0.0.1", 53)); print("stub dns-tcp")  # the sandbox's own stub
except OSError as e:
    print("no dns-tcp", e.errno)
)PY";
  write_file(ws_ / "probe.py", probe);
  const Outcome o = run({python3(), "probe.py", port()});
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(o.out.find("CONNECTED"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("no 127.0.0.1"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("stub dns-tcp"), std::string::npos) << o.out;
  EXPECT_TRUE(decisions().empty()) << read_file(log_);
  EXPECT_EQ(server_->log().find("GET"), std::string::npos) << server_->log();
}

}  // namespace
}  // namespace vigil::test
