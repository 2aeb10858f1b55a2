// srt's network.mitmProxy in a real `vigil run`: an allowed connection to one of its
// domains goes to the user's MITM proxy on a Unix socket (asked with CONNECT for the
// name the client gave; that hop resolves it), every other allowed host is dialled as
// before, and the allow list still decides first. The MITM proxy is a stand-in this test
// starts (python, on a socket in a temp directory): it logs each CONNECT and relays to a
// loopback HTTP server, which answers with the Host it was asked for.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/integration/harness.h"
#include "tests/integration/proxy_harness.h"

namespace vigil::test {
namespace {

// argv: socket path, upstream port. CONNECT host:port -> 127.0.0.1:<upstream port>.
constexpr const char* kMitmStandIn = R"PY(
import os, socket, sys, threading
path, upstream_port = sys.argv[1], int(sys.argv[2])
def pump(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    finally:
        try:
            b.shutdown(socket.SHUT_WR)
        except OSError:
            pass
def serve(c):
    head = b""
    while b"\r\n\r\n" not in head:
        d = c.recv(1)
        if not d:
            c.close()
            return
        head += d
    line = head.split(b"\r\n")[0].decode()
    sys.stderr.write("mitm: %s\n" % line)
    sys.stderr.flush()
    if not line.startswith("CONNECT "):
        c.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
        c.close()
        return
    u = socket.create_connection(("127.0.0.1", upstream_port))
    c.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
    threading.Thread(target=pump, args=(u, c), daemon=True).start()
    pump(c, u)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
s.listen(16)
print("listening", flush=True)
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
)PY";

// Plain HTTP on 127.0.0.1:0, answering "host=<Host header>".
constexpr const char* kUpstream = R"PY(
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args):
        pass
    def do_GET(self):
        out = ("host=%s\n" % self.headers.get("Host")).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print("port", srv.server_address[1], flush=True)
srv.serve_forever()
)PY";

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

TEST(MitmProxy, ItsDomainsGoThroughTheUsersProxyAndTheAllowListStillDecides) {
  if (std::system("command -v curl >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "curl is missing (tools/bootstrap.sh installs it)";
  TempDir srv, ws, cfg;
  write_file(srv / "upstream.py", kUpstream);
  write_file(srv / "mitm.py", kMitmStandIn);
  Background upstream({python3(), srv / "upstream.py"}, srv.path(), "upstream");
  const auto port = upstream.wait_for("port (\\d+)", false);
  ASSERT_TRUE(port) << upstream.err();
  const std::string sock = srv / "mitm.sock";
  Background mitm({python3(), srv / "mitm.py", sock, *port}, srv.path(), "mitm");
  ASSERT_TRUE(mitm.wait_for("listening", false)) << mitm.err();
  // mitm.test resolves nowhere: only the MITM hop can reach it. denied.test is the
  // MITM proxy's but not allowed. direct.test is allowed and dialled by vigil.
  write_file(cfg / "settings.json", R"({
  "network": {"allowedDomains": ["mitm.test", "*.mitm.test", "direct.test"],
              "mitmProxy": {"socketPath": ")" + sock + R"(",
                            "domains": ["mitm.test", "*.mitm.test", "denied.test"]}}
})");
  const std::string p = ":" + *port + "/";
  const Outcome o = run_vigil(
      {"run", "--settings", cfg / "settings.json", "--test-resolve", "direct.test=127.0.0.1",
       "--test-allow-loopback", "--", "sh", "-c",
       "curl -sS --max-time 20 http://mitm.test" + p +
           " && curl -sS --max-time 20 --proxytunnel http://api.mitm.test" + p +
           " && curl -sS --max-time 20 http://direct.test" + p +
           " && curl -sS --max-time 20 -o /dev/null -w 'denied=%{http_code}\\n' http://denied.test" +
           p},
      ws.path(), 120, {{"VIGIL_TEST_MODE", "1"}});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("host=mitm.test" + std::string(":") + *port), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("host=api.mitm.test:" + *port), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("host=direct.test:" + *port), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("denied=403"), std::string::npos) << o.out;
  const std::string seen = mitm.err();
  EXPECT_EQ(count(seen, "mitm: CONNECT mitm.test:" + *port + " HTTP/1.1"), 1u) << seen;
  EXPECT_EQ(count(seen, "mitm: CONNECT api.mitm.test:" + *port + " HTTP/1.1"), 1u) << seen;
  EXPECT_EQ(seen.find("direct.test"), std::string::npos) << "dialled by vigil: " << seen;
  EXPECT_EQ(seen.find("denied.test"), std::string::npos) << "refused before: " << seen;
  EXPECT_NE(o.err.find("denied.test"), std::string::npos) << "the block names it: " << o.err;
}

// A MITM proxy that is not there: the connection fails with a 502 naming it, and the
// host is never dialled directly instead.
TEST(MitmProxy, AMissingSocketIsA502NeverADirectDial) {
  if (std::system("command -v curl >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "curl is missing (tools/bootstrap.sh installs it)";
  TempDir srv, ws, cfg;
  write_file(srv / "upstream.py", kUpstream);
  Background upstream({python3(), srv / "upstream.py"}, srv.path(), "upstream");
  const auto port = upstream.wait_for("port (\\d+)", false);
  ASSERT_TRUE(port) << upstream.err();
  write_file(cfg / "settings.json", R"({
  "network": {"allowedDomains": ["mitm.test"],
              "mitmProxy": {"socketPath": ")" + (srv / "absent.sock") + R"(",
                            "domains": ["mitm.test"]}}
})");
  const Outcome o = run_vigil(
      {"run", "--settings", cfg / "settings.json", "--test-resolve", "mitm.test=127.0.0.1",
       "--test-allow-loopback", "--", "sh", "-c",
       "curl -sS --max-time 20 -o /dev/null -w 'code=%{http_code}\\n' http://mitm.test:" + *port +
           "/"},
      ws.path(), 120, {{"VIGIL_TEST_MODE", "1"}});
  EXPECT_NE(o.out.find("code=502"), std::string::npos) << o.out << o.err;
  EXPECT_EQ(o.out.find("host="), std::string::npos) << o.out;
}

}  // namespace
}  // namespace vigil::test
