// network.parentProxy through `vigil run`: a small CONNECT proxy on loopback, started
// here, carries what vigil allows (plain HTTP and CONNECT tunnels alike), and a host vigil
// denies never reaches it. The parent logs every CONNECT it is asked for.
#include <gtest/gtest.h>

#include "tests/integration/proxy_harness.h"

namespace vigil::test {
namespace {

// A CONNECT-only parent proxy on 127.0.0.1:0. argv: NAME=IP mappings for the names it
// is asked for (the test's names resolve nowhere else). Prints "port N", then one
// "CONNECT host:port" line per request.
constexpr const char* kPyParent = R"PY(
import socket, sys, threading
table = dict(a.split("=", 1) for a in sys.argv[1:])
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
def serve(c):
    head = b""
    while b"\r\n\r\n" not in head:
        d = c.recv(1)
        if not d: return
        head += d
    line = head.split(b"\r\n")[0].decode()
    print(line, flush=True)
    method, target, _ = line.split(" ")
    if method != "CONNECT":
        c.sendall(b"HTTP/1.1 405 CONNECT only\r\n\r\n"); c.close(); return
    host, port = target.rsplit(":", 1)
    try:
        u = socket.create_connection((table.get(host, host), int(port)), timeout=10)
    except OSError:
        c.sendall(b"HTTP/1.1 502 Bad Gateway\r\n\r\n"); c.close(); return
    c.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
    threading.Thread(target=pipe, args=(u, c), daemon=True).start()
    pipe(c, u)
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
print("port", s.getsockname()[1], flush=True)
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
)PY";

TEST(ParentProxy, AllowedTrafficGoesThroughTheParentAndDeniedHostsNeverReachIt) {
  if (::access("/usr/bin/curl", X_OK) != 0) GTEST_SKIP() << "curl is not installed";
  TempDir ws, cfg, srv;
  make_dirs(srv / "www");
  write_file(srv / "www/hello.txt", "hello via the parent\n");
  FileServer origin(srv, srv / "www");
  ASSERT_NE(origin.port(), 0) << "python http.server did not start";
  write_file(srv / "parent.py", kPyParent);
  Background parent({python3(), srv / "parent.py", "allowed.test=127.0.0.1"}, srv.path(), "parent");
  const auto pport = parent.wait_for("port (\\d+)", false);
  ASSERT_TRUE(pport) << parent.err();

  write_file(cfg / "s.json", R"({"filesystem": {"allowWrite": ["."]},
    "network": {"allowedDomains": ["allowed.test"],
                "parentProxy": {"http": "http://127.0.0.1:)" +
                                 *pport + R"("}}})");
  const std::string port = std::to_string(origin.port());
  const std::string script =
      "curl -sS --max-time 20 http://allowed.test:" + port + "/hello.txt; " +
      "curl -sS --max-time 20 -p http://allowed.test:" + port + "/hello.txt; " +
      "curl -sS --max-time 20 -o /dev/null -w 'denied %{http_code}\\n' http://denied.test:" + port +
      "/hello.txt";
  const Outcome o =
      run_vigil({"run", "--settings", cfg / "s.json", "--log", cfg / "log.jsonl", "--test-resolve",
                 "allowed.test=127.0.0.1", "--test-resolve", "denied.test=127.0.0.1",
                 "--test-allow-loopback", "--", "sh", "-c", script},
                ws.path(), 120, {{"VIGIL_TEST_MODE", "1"}});
  EXPECT_EQ(o.out, "hello via the parent\nhello via the parent\ndenied 403\n") << o.err;
  // Both allowed requests (absolute-form and a CONNECT tunnel) went through the parent;
  // the denied host was never asked of it.
  const std::string asked = parent.out();
  EXPECT_EQ(count_lines_containing(asked, "CONNECT allowed.test:" + port + " HTTP/1.1"), 2u)
      << asked;
  EXPECT_EQ(asked.find("denied.test"), std::string::npos) << asked;
  EXPECT_NE(o.err.find("denied.test"), std::string::npos) << "the block names it: " << o.err;
  // And explain says where allowed traffic goes.
  const Outcome e = run_vigil({"explain", "--settings", cfg / "s.json"}, ws.path());
  EXPECT_NE(e.out.find("through the parent proxy 127.0.0.1:" + *pport), std::string::npos) << e.out;
}

TEST(ParentProxy, TheUsersProxyVariablesAreTheFallback) {
  TempDir ws, cfg;
  write_file(cfg / "s.json", R"({"filesystem": {"allowWrite": ["."]}})");
  const Outcome e =
      run_vigil({"explain", "--settings", cfg / "s.json"}, ws.path(), 60,
                {{"HTTPS_PROXY", "http://127.0.0.1:3999"}, {"NO_PROXY", "localhost"}});
  EXPECT_EQ(e.exit_code, 0) << e.err;
  EXPECT_NE(e.out.find("parent proxy 127.0.0.1:3999 (from environment"), std::string::npos)
      << e.out;
  const Outcome bad = run_vigil({"explain", "--settings", cfg / "s.json"}, ws.path(), 60,
                                {{"HTTPS_PROXY", "http://user:secret@127.0.0.1:3999"}});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("user:password in a proxy URL is not supported"), std::string::npos)
      << bad.err;
  EXPECT_EQ(bad.err.find(":secret@"), std::string::npos) << "never echo the password";
}

}  // namespace
}  // namespace vigil::test
