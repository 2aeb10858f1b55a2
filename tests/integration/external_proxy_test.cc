// network.httpProxyPort / socksProxyPort through `vigil run`: the user's own proxy, a
// small one started here on 127.0.0.1, gets the sandbox's proxy traffic (plain HTTP, a
// CONNECT tunnel, SOCKS5) and decides it; vigil's allowlist does not (it allows nothing
// here, and the requests still succeed), and the session log records each connection as
// passed on undecided, naming the key.
#include <gtest/gtest.h>

#include "tests/integration/proxy_harness.h"

namespace vigil::test {
namespace {

// An HTTP proxy (absolute-form GET and CONNECT) and a SOCKS5 server (no auth, CONNECT),
// both sending every name to 127.0.0.1 (the test's names resolve nowhere else). Prints
// "ports H S", then one line per request: "GET <url>", "CONNECT host:port", "SOCKS host:port".
constexpr const char* kPyExternal = R"PY(
import socket, struct, sys, threading
def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d: break
            b.sendall(d)
    except OSError: pass
    finally:
        try: b.shutdown(socket.SHUT_WR)
        except OSError: pass
def splice(c, u):
    threading.Thread(target=pipe, args=(u, c), daemon=True).start()
    pipe(c, u)
def http(c):
    head = b""
    while b"\r\n\r\n" not in head:
        d = c.recv(1)
        if not d: return
        head += d
    lines = head.split(b"\r\n")
    method, target, version = lines[0].decode().split(" ")
    if method == "CONNECT":
        print("CONNECT", target, flush=True)
        u = socket.create_connection(("127.0.0.1", int(target.rsplit(":", 1)[1])))
        c.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        splice(c, u); return
    print(method, target, flush=True)
    rest = target.split("://", 1)[1]
    hostport, _, path = rest.partition("/")
    port = int(hostport.rsplit(":", 1)[1]) if ":" in hostport else 80
    u = socket.create_connection(("127.0.0.1", port))
    req = ("%s /%s %s\r\n" % (method, path, version)).encode()
    kept = [l for l in lines[1:] if l and not l.lower().startswith(b"proxy-")]
    u.sendall(req + b"\r\n".join(kept + [b"Connection: close", b"", b""]))
    splice(c, u)
def socks(c):
    v, n = c.recv(2)
    c.recv(n)
    c.sendall(b"\x05\x00")
    ver, cmd, _, atyp = c.recv(4)
    if atyp == 3:
        host = c.recv(c.recv(1)[0]).decode()
    else:
        host = socket.inet_ntoa(c.recv(4))
    port = struct.unpack(">H", c.recv(2))[0]
    print("SOCKS %s:%d" % (host, port), flush=True)
    u = socket.create_connection(("127.0.0.1", port))
    c.sendall(b"\x05\x00\x00\x01\x00\x00\x00\x00\x00\x00")
    splice(c, u)
def serve(s, fn):
    while True:
        c, _ = s.accept()
        threading.Thread(target=fn, args=(c,), daemon=True).start()
h = socket.socket(); h.bind(("127.0.0.1", 0)); h.listen(64)
k = socket.socket(); k.bind(("127.0.0.1", 0)); k.listen(64)
print("ports", h.getsockname()[1], k.getsockname()[1], flush=True)
threading.Thread(target=serve, args=(k, socks), daemon=True).start()
serve(h, http)
)PY";

TEST(ExternalProxy, TheUsersProxyCarriesAndDecidesTheSandboxesTrafficAndVigilSaysItDidNotDecide) {
  if (::access("/usr/bin/curl", X_OK) != 0) GTEST_SKIP() << "curl is not installed";
  TempDir ws, cfg, srv;
  make_dirs(srv / "www");
  write_file(srv / "www/hello.txt", "hello via your proxy\n");
  FileServer origin(srv, srv / "www");
  ASSERT_NE(origin.port(), 0) << "python http.server did not start";
  write_file(srv / "external.py", kPyExternal);
  Background external({python3(), srv / "external.py"}, srv.path(), "external");
  ASSERT_TRUE(external.wait_for("ports \\d+ \\d+", false)) << external.err();
  const auto hport = external.wait_for("ports (\\d+) ", false);
  const auto sport = external.wait_for("ports \\d+ (\\d+)", false);
  ASSERT_TRUE(hport && sport) << external.out();

  // vigil's own list allows nothing: only the external proxy's say counts.
  write_file(cfg / "s.json", R"({"filesystem": {"allowWrite": ["."]},
    "network": {"allowedDomains": [], "httpProxyPort": )" +
                                 *hport + R"(, "socksProxyPort": )" + *sport + "}}");
  const std::string port = std::to_string(origin.port());
  const std::string url = "http://origin.test:" + port + "/hello.txt";
  const std::string script = "curl -sS --max-time 20 " + url + "; curl -sS --max-time 20 -p " +
                             url + "; curl -sS --max-time 20 -x \"$ALL_PROXY\" " + url;
  const Outcome o = run_vigil(
      {"run", "--settings", cfg / "s.json", "--log", cfg / "log.jsonl", "--", "sh", "-c", script},
      ws.path(), 120);
  EXPECT_EQ(o.out, "hello via your proxy\nhello via your proxy\nhello via your proxy\n") << o.err;
  // The external proxy saw all three requests.
  const std::string seen = external.out();
  EXPECT_EQ(count_lines_containing(seen, "GET " + url), 1u) << seen;
  EXPECT_EQ(count_lines_containing(seen, "CONNECT origin.test:" + port), 1u) << seen;
  EXPECT_EQ(count_lines_containing(seen, "SOCKS origin.test:" + port), 1u) << seen;
  // The warning said who decides; nothing was refused, so there is no block.
  EXPECT_NE(o.err.find("network.httpProxyPort: HTTP traffic goes to your proxy on 127.0.0.1:" +
                       *hport + ", which decides it"),
            std::string::npos)
      << o.err;
  EXPECT_EQ(o.err.find("<sandbox_violations>"), std::string::npos) << o.err;
  // The log has one record per connection, with the key and the target it carried.
  const std::string log = read_file(cfg / "log.jsonl");
  for (const auto& [proto, rule] :
       {std::pair{"http", "network.httpProxyPort"}, std::pair{"connect", "network.httpProxyPort"},
        std::pair{"socks5", "network.socksProxyPort"}}) {
    std::size_t n = 0;
    for (std::size_t at = log.find("\"kind\":\"net.decision\""); at != std::string::npos;
         at = log.find("\"kind\":\"net.decision\"", at + 1)) {
      const std::string line = log.substr(at, log.find('\n', at) - at);
      if (line.find(std::string("\"proto\":\"") + proto + "\"") != std::string::npos &&
          line.find(std::string("\"rule\":\"") + rule + "\"") != std::string::npos &&
          line.find("\"host\":\"origin.test\"") != std::string::npos &&
          line.find("vigil did not decide") != std::string::npos)
        ++n;
    }
    EXPECT_EQ(n, 1u) << proto << " " << rule << "\n" << log;
  }
  // explain says it too.
  const Outcome e = run_vigil({"explain", "--settings", cfg / "s.json"}, ws.path());
  EXPECT_NE(e.out.find("goes to your proxy on the host's 127.0.0.1:" + *hport +
                       " (network.httpProxyPort), which decides it"),
            std::string::npos)
      << e.out;
  EXPECT_NE(e.out.find("127.0.0.1:" + *sport + " (network.socksProxyPort)"), std::string::npos)
      << e.out;
}

TEST(ExternalProxy, AProxyThatIsNotThereIsLoggedAsAFailureNotAFallback) {
  if (::access("/usr/bin/curl", X_OK) != 0) GTEST_SKIP() << "curl is not installed";
  TempDir ws, cfg;
  // A port nobody listens on: bound, then closed.
  int free_port = 0;
  {
    UniqueFd s(::socket(AF_INET, SOCK_STREAM, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ASSERT_EQ(::bind(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ASSERT_EQ(::getsockname(s.get(), reinterpret_cast<sockaddr*>(&a), &len), 0);
    free_port = ntohs(a.sin_port);
  }
  write_file(cfg / "s.json", R"({"filesystem": {"allowWrite": ["."]},
    "network": {"allowedDomains": ["origin.test"], "httpProxyPort": )" +
                                 std::to_string(free_port) + "}}");
  const Outcome o =
      run_vigil({"run", "--settings", cfg / "s.json", "--log", cfg / "log.jsonl", "--", "sh", "-c",
                 "curl -sS --max-time 20 http://origin.test:1/ ; echo rc=$?"},
                ws.path(), 120);
  EXPECT_NE(o.out.find("rc="), std::string::npos);
  EXPECT_EQ(o.out.find("rc=0"), std::string::npos) << "nothing reached anything: " << o.out;
  const std::string log = read_file(cfg / "log.jsonl");
  EXPECT_NE(log.find("net.upstream_failure"), std::string::npos) << log;
  EXPECT_NE(log.find("did not accept the connection"), std::string::npos) << log;
}

}  // namespace
}  // namespace vigil::test
