// vigil.network.capture (on by default) with the rest of the real programs that ignore
// the proxy variables: ssh and git over ssh to a loopback sshd the test starts (as its
// own user, on a port it picked, with a key it made), a static Rust client, UDP refused
// with a record, DNS over TCP answered by the stub, programs that honour the variables
// (not captured twice), and every route to the host's loopback services refused. The
// servers listen on the HOST's loopback, which only the proxy (on the host side,
// --test-allow-loopback) can reach; every name resolves to 127.0.0.1 (--test-resolve).
// Nothing here is aimed at any address but loopback.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "tests/integration/harness.h"
#include "tests/integration/proxy_harness.h"

namespace vigil::test {
namespace {

// Capture is not named: it is on by default.
const char* kSettings = R"({
  "filesystem": {"allowWrite": ["."]},
  "network": {"allowedDomains": ["allowed.test"]}
})";

const std::map<std::string, std::string> kTestModeEnv = {{"VIGIL_TEST_MODE", "1"}};

// A tool missing: a failure where tools are required (CI), else a skip that says why.
bool missing(const std::string& tool, const std::string& why) {
  if (run_program({"sh", "-c", "command -v " + tool}, "/tmp", 10).exit_code == 0) return false;
  const char* r = std::getenv("VIGIL_REQUIRE_TOOLS");
  EXPECT_FALSE(r != nullptr && std::string(r) == "1") << tool << " is missing (" << why << ")";
  return true;
}

std::vector<std::string> lines_of_kind(const std::string& log, const std::string& kind) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < log.size()) {
    const std::size_t nl = log.find('\n', pos);
    std::string line = log.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    if (line.find("\"kind\":\"" + kind + "\"") != std::string::npos) out.push_back(std::move(line));
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  return out;
}

// A free port on the host's 127.0.0.1 (bound and let go: sshd binds it next).
std::uint16_t free_loopback_port() {
  UniqueFd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(s.get(), reinterpret_cast<sockaddr*>(&a), &len) != 0)
    return 0;
  return ntohs(a.sin_port);
}

std::string own_shell() {
  const passwd* pw = ::getpwuid(::getuid());
  return pw != nullptr && pw->pw_shell != nullptr ? pw->pw_shell : "";
}
// vigil-ci's shell is nologin: sshd runs every remote command through it, so the session
// ends with its message (after the key was accepted: the connection got through).
bool shell_refuses_commands() {
  const std::string sh = own_shell();
  return sh.ends_with("nologin") || sh.ends_with("false");
}

class NetCapturePrograms : public ::testing::Test {
 protected:
  void SetUp() override {
    make_dirs(srv_ / "www");
    write_file(srv_ / "www/hello.txt", "hello through capture\n");
    write_file(cfg_ / "settings.json", kSettings);
    server_ = std::make_unique<FileServer>(srv_, srv_ / "www");
    ASSERT_NE(server_->port(), 0) << "python http.server did not start";
  }
  std::string port() const { return std::to_string(server_->port()); }

  Outcome run(const std::vector<std::string>& command, bool allow_loopback = true,
              const std::map<std::string, std::string>& extra_env = {}) {
    log_ = cfg_ / ("session" + std::to_string(++runs_) + ".jsonl");
    std::vector<std::string> args = {"run", "--settings", cfg_ / "settings.json", "--log", log_};
    args.insert(args.end(), kLoopbackTestResolve.begin(), kLoopbackTestResolve.end());
    if (allow_loopback) args.push_back("--test-allow-loopback");
    args.push_back("--");
    args.insert(args.end(), command.begin(), command.end());
    std::map<std::string, std::string> env = kTestModeEnv;
    env.insert(extra_env.begin(), extra_env.end());
    return run_vigil(args, ws_.path(), 180, env);
  }
  std::vector<std::string> decisions() const { return lines_of_kind(read_file(log_), "net.decision"); }

  // One decision (or more, each the same), captured, for `host` with `verdict`.
  void expect_decisions(const std::string& host, const std::string& verdict,
                        const std::string& program) {
    const auto d = decisions();
    ASSERT_GE(d.size(), 1u) << read_file(log_);
    for (const auto& r : d) {
      EXPECT_NE(r.find(R"("host":")" + host + "\""), std::string::npos) << r;
      EXPECT_NE(r.find(R"("verdict":")" + verdict + "\""), std::string::npos) << r;
      EXPECT_NE(r.find(R"("captured":true)"), std::string::npos) << r;
      EXPECT_NE(r.find(R"("program":")" + program), std::string::npos) << r;
    }
  }
  // The block line names host:port and the key to add, and says the tool ignored the
  // proxy settings, once.
  void expect_block_line(const Outcome& o, const std::string& target) {
    EXPECT_NE(o.err.find(target), std::string::npos) << o.err;
    EXPECT_NE(o.err.find("network.allowedDomains"), std::string::npos) << o.err;
    const std::size_t note = o.err.find("ignored the proxy settings");
    EXPECT_NE(note, std::string::npos) << o.err;
    EXPECT_EQ(o.err.find("ignored the proxy settings", note + 1), std::string::npos) << o.err;
  }

  TempDir ws_, cfg_, srv_;
  std::unique_ptr<FileServer> server_;
  int runs_ = 0;
  std::string log_;
};

// ---------------------------------------------------------------------------------------
// ssh and git over ssh: an sshd of the test's own, on the host's 127.0.0.1.
class NetCaptureSsh : public NetCapturePrograms {
 protected:
  void SetUp() override {
    NetCapturePrograms::SetUp();
    if (missing("ssh", "tools/bootstrap.sh installs openssh-client") ||
        missing("/usr/sbin/sshd", "tools/bootstrap.sh installs openssh-server") ||
        missing("ssh-keygen", "openssh-client"))
      GTEST_SKIP() << "ssh, sshd or ssh-keygen is missing (tools/bootstrap.sh installs them)";
    // sshd started by root separates privileges into /run/sshd, which a container may
    // lack (the package's init script makes it, and none ran).
    if (::geteuid() == 0) make_dirs("/run/sshd");
    const std::string d = sshd_dir_.path();
    ASSERT_EQ(run_program({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", d + "/host_key"}, d).exit_code, 0);
    ASSERT_EQ(run_program({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", ws_ / "id_test"}, d).exit_code, 0);
    write_file(d + "/authorized_keys", read_file(ws_ / "id_test.pub"));
    ssh_port_ = free_loopback_port();
    ASSERT_NE(ssh_port_, 0);
    write_file(d + "/sshd_config", "Port " + std::to_string(ssh_port_) +
                                       "\nListenAddress 127.0.0.1\nHostKey " + d +
                                       "/host_key\nAuthorizedKeysFile " + d +
                                       "/authorized_keys\nPasswordAuthentication no\n"
                                       "KbdInteractiveAuthentication no\nUsePAM no\n"
                                       "StrictModes no\nPidFile none\nLogLevel VERBOSE\n");
    sshd_ = std::make_unique<Background>(
        std::vector<std::string>{"/usr/sbin/sshd", "-D", "-e", "-f", d + "/sshd_config"}, d, "sshd");
    ASSERT_TRUE(sshd_->wait_for("Server listening on 127.0.0.1", true)) << sshd_->err();
  }
  // ssh told to ignore every proxy (and every file of the user's own).
  std::string ssh_command() const {
    return "ssh -F /dev/null -o ProxyCommand=none -o BatchMode=yes -o StrictHostKeyChecking=no "
           "-o UserKnownHostsFile=/dev/null -o ConnectTimeout=30 -i " +
           (ws_ / "id_test") + " -p " + std::to_string(ssh_port_);
  }
  std::string user() const {
    const passwd* pw = ::getpwuid(::getuid());
    return pw != nullptr ? pw->pw_name : "root";
  }
  std::size_t accepted() const { return count_lines_containing(sshd_->err(), "Accepted publickey"); }
  // Reached: sshd accepted the key, and the command ran (or the nologin shell said so).
  void expect_reached_sshd(const Outcome& o, const std::string& output) {
    EXPECT_EQ(accepted(), 1u) << sshd_->err();
    if (shell_refuses_commands()) {
      EXPECT_NE((o.out + o.err).find("not available"), std::string::npos) << o.out << o.err;
    } else {
      EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
      EXPECT_NE(o.out.find(output), std::string::npos) << o.out << o.err;
    }
  }

  TempDir sshd_dir_;
  std::uint16_t ssh_port_ = 0;
  std::unique_ptr<Background> sshd_;
};

TEST_F(NetCaptureSsh, SshReachesAnAllowedName) {
  const std::string cmd = ssh_command() + " " + user() + "@allowed.test echo reached-over-ssh";
  const Outcome o = run({"sh", "-c", cmd});
  expect_reached_sshd(o, "reached-over-ssh");
  expect_decisions("allowed.test", "allowed", "ssh");
}

TEST_F(NetCaptureSsh, SshIsRefusedForADeniedNameWithTheLine) {
  const std::string cmd = ssh_command() + " " + user() + "@denied.test echo reached-over-ssh";
  const Outcome o = run({"sh", "-c", cmd});
  EXPECT_EQ(o.exit_code, 255) << o.out << o.err;
  EXPECT_EQ(o.out.find("reached-over-ssh"), std::string::npos) << o.out;
  expect_block_line(o, "denied.test:" + std::to_string(ssh_port_));
  expect_decisions("denied.test", "denied", "ssh");
  EXPECT_EQ(sshd_->err().find("Connection from"), std::string::npos) << sshd_->err();
}

TEST_F(NetCaptureSsh, GitOverSshClonesFromAnAllowedNameAndIsRefusedForADeniedOne) {
  if (missing("git", "tools/bootstrap.sh installs it")) GTEST_SKIP() << "git is missing";
  const std::string repo = srv_ / "repo";
  make_dirs(repo);
  const std::map<std::string, std::string> git_env = {
      {"GIT_AUTHOR_NAME", "t"}, {"GIT_AUTHOR_EMAIL", "t@t"}, {"GIT_COMMITTER_NAME", "t"},
      {"GIT_COMMITTER_EMAIL", "t@t"}, {"HOME", srv_.path()}};
  ASSERT_EQ(run_program({"git", "init", "-q", repo}, repo, 30, git_env).exit_code, 0);
  write_file(repo + "/README", "cloned over ssh\n");
  ASSERT_EQ(run_program({"git", "-C", repo, "add", "README"}, repo, 30, git_env).exit_code, 0);
  ASSERT_EQ(run_program({"git", "-C", repo, "commit", "-qm", "one"}, repo, 30, git_env).exit_code, 0);
  // vigil points git's ssh at its SOCKS bridge (GIT_SSH_COMMAND in the sandbox): a user
  // whose ssh ignores proxies sets their own, as here, inside the command.
  auto clone = [&](const std::string& host, const std::string& dir) {
    const std::string url = "ssh://" + user() + "@" + host + ":" + std::to_string(ssh_port_) + repo;
    return run({"sh", "-c", "GIT_SSH_COMMAND='" + ssh_command() + "' exec git clone -q " + url + " " + dir});
  };
  const Outcome o = clone("allowed.test", "clone");
  EXPECT_EQ(accepted(), 1u) << sshd_->err() << o.err;
  if (shell_refuses_commands()) {
    // The nologin shell's "This account is currently not available." where git expected
    // its protocol.
    EXPECT_NE(o.err.find("line length character: This"), std::string::npos) << o.err;
  } else {
    EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
    EXPECT_EQ(read_file(ws_ / "clone/README"), "cloned over ssh\n");
  }
  expect_decisions("allowed.test", "allowed", "ssh");

  const Outcome d = clone("denied.test", "clone2");
  EXPECT_NE(d.exit_code, 0);
  expect_block_line(d, "denied.test:" + std::to_string(ssh_port_));
  expect_decisions("denied.test", "denied", "ssh");
  EXPECT_EQ(accepted(), 1u) << sshd_->err();
  EXPECT_FALSE(exists(ws_ / "clone2/README"));

  // git with vigil's own GIT_SSH_COMMAND (ssh through the SOCKS bridge, honouring the
  // proxy): one decision by the ordinary listener, not captured (no double proxying).
  const Outcome p = run({"git", "ls-remote", "ssh://" + user() + "@denied.test:" +
                                                 std::to_string(ssh_port_) + repo});
  EXPECT_NE(p.exit_code, 0);
  const auto socks = decisions();
  ASSERT_EQ(socks.size(), 1u) << read_file(log_);
  EXPECT_NE(socks[0].find(R"("proto":"socks5")"), std::string::npos) << socks[0];
  EXPECT_EQ(socks[0].find(R"("captured")"), std::string::npos) << socks[0];
}

// ---------------------------------------------------------------------------------------
// A static Rust client: its own getaddrinfo (static glibc) and std::net, no proxy support.
const char* kRustClient = R"RS(
use std::io::{Read, Write};
use std::net::TcpStream;
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let mut s = match TcpStream::connect(format!("{}:{}", a[1], a[2])) {
        Ok(s) => s,
        Err(e) => { println!("refused {:?}", e.kind()); std::process::exit(3); }
    };
    s.write_all(format!("GET /hello.txt HTTP/1.0\r\nHost: {}\r\n\r\n", a[1]).as_bytes()).unwrap();
    let mut data = String::new();
    s.read_to_string(&mut data).unwrap();
    print!("{}", data.splitn(2, "\r\n\r\n").nth(1).unwrap_or(""));
}
)RS";

TEST_F(NetCapturePrograms, StaticRustClientReachesAnAllowedNameAndIsRefusedForADeniedOne) {
  if (missing("rustc", "tools/bootstrap.sh installs cargo and rustc"))
    GTEST_SKIP() << "rustc is missing (tools/bootstrap.sh installs it)";
  write_file(srv_ / "client.rs", kRustClient);
  const Outcome built = run_program({"rustc", "-O", "-C", "target-feature=+crt-static", "-o",
                                     ws_ / "rclient", srv_ / "client.rs"},
                                    srv_.path(), 300, {{"HOME", srv_.path()}});
  ASSERT_EQ(built.exit_code, 0) << built.err;
  // Static: nothing of the host's libraries is loaded (no interpreter).
  const Outcome headers = run_program({"readelf", "-l", ws_ / "rclient"}, srv_.path());
  ASSERT_EQ(headers.exit_code, 0) << headers.err;
  EXPECT_EQ(headers.out.find("interpreter"), std::string::npos) << headers.out;

  const Outcome o = run({"./rclient", "allowed.test", port()});
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(o.out, "hello through capture\n") << o.err;
  expect_decisions("allowed.test", "allowed", "rclient");

  const Outcome d = run({"./rclient", "denied.test", port()});
  EXPECT_EQ(d.exit_code, 3) << d.out << d.err;
  EXPECT_NE(d.out.find("refused ConnectionRefused"), std::string::npos) << d.out << d.err;
  expect_block_line(d, "denied.test:" + port());
  expect_decisions("denied.test", "denied", "rclient");
  EXPECT_EQ(count_lines_containing(server_->log(), "GET /hello.txt"), 1u) << server_->log();
}

// ---------------------------------------------------------------------------------------
// UDP: the stub's (127.0.0.1:53) only. A datagram to anywhere else is dropped, the socket
// refuses the rest (ECONNREFUSED), and the refusal is recorded and in the block.
const char* kUdpClient = R"PY(
import socket, sys
host, port = sys.argv[1], int(sys.argv[2])
addr = socket.getaddrinfo(host, port, socket.AF_INET, socket.SOCK_DGRAM)[0][4]
if len(sys.argv) > 3:  # an IPv6 socket, to the same fake address v4-mapped
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    addr = ("::ffff:" + addr[0], port)
else:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(10)
s.connect(addr)
s.send(b"ping over udp")
try:
    print("answered", s.recv(100))
except OSError as e:
    print("refused", type(e).__name__)
    sys.exit(3)
)PY";

// A UDP listener on the host's loopback: prints what arrives.
const char* kUdpListener = R"PY(
import socket, sys
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(("127.0.0.1", 0))
print("port", u.getsockname()[1], flush=True)
while True:
    data, peer = u.recvfrom(2048)
    print("GOT", data, flush=True)
    u.sendto(b"pong", peer)
)PY";

TEST_F(NetCapturePrograms, UdpToANameIsRefusedAtTheSocketWithARecordAndTheLine) {
  write_file(srv_ / "udp_listener.py", kUdpListener);
  Background listener({python3(), srv_ / "udp_listener.py"}, srv_.path(), "udp");
  const auto udp_port = listener.wait_for("port (\\d+)", false);
  ASSERT_TRUE(udp_port);
  write_file(ws_ / "udp.py", kUdpClient);
  for (const bool v6 : {false, true}) {
    for (const std::string host : {"allowed.test", "denied.test"}) {
      std::vector<std::string> cmd = {python3(), "udp.py", host, *udp_port};
      if (v6) cmd.push_back("v6");
      const Outcome o = run(cmd);
      EXPECT_EQ(o.exit_code, 3) << host << v6 << o.out << o.err;
      EXPECT_NE(o.out.find("refused ConnectionRefusedError"), std::string::npos) << o.out << o.err;
      EXPECT_NE(o.err.find(host + ":" + *udp_port), std::string::npos) << o.err;
      EXPECT_NE(o.err.find("UDP is not carried"), std::string::npos) << o.err;
      const auto d = decisions();
      ASSERT_EQ(d.size(), 1u) << read_file(log_);
      EXPECT_NE(d[0].find(R"("verdict":"denied")"), std::string::npos) << d[0];
      EXPECT_NE(d[0].find(R"("refused_by":"udp")"), std::string::npos) << d[0];
      EXPECT_NE(d[0].find(R"("captured":true)"), std::string::npos) << d[0];
      EXPECT_NE(d[0].find(R"("program":"python3)"), std::string::npos) << d[0];
    }
  }
  EXPECT_EQ(listener.out().find("GOT"), std::string::npos) << listener.out();
}

// getaddrinfo connects a UDP socket to each answer to sort them, and sends nothing: no
// record, no line (the TCP connection after it is the only decision).
TEST_F(NetCapturePrograms, GetaddrinfoSortingLeavesNoUdpRecord) {
  const char* client = R"PY(
import socket, sys
print(len(socket.getaddrinfo(sys.argv[1], int(sys.argv[2]))) > 1)
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=20)
s.close()
)PY";
  write_file(ws_ / "gai.py", client);
  const Outcome o = run({python3(), "gai.py", "allowed.test", port()});
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(o.out, "True\n") << o.err;
  const auto d = decisions();
  ASSERT_EQ(d.size(), 1u) << read_file(log_);
  EXPECT_EQ(d[0].find("refused_by"), std::string::npos) << d[0];
  EXPECT_EQ(o.err.find("sandbox_violations"), std::string::npos) << o.err;
}

// ---------------------------------------------------------------------------------------
// DNS over TCP to the stub: a length-prefixed query gets a fake address, which a connect
// then carries through the proxy to the allowed name.
TEST_F(NetCapturePrograms, DnsOverTcpIsAnsweredByTheStub) {
  const char* client = R"PY(
import socket, struct, sys
name, port = sys.argv[1], int(sys.argv[2])
q = struct.pack(">HHHHHH", 0x4242, 0x0100, 1, 0, 0, 0)
q += b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\0" + struct.pack(">HH", 1, 1)
t = socket.create_connection(("127.0.0.1", 53), timeout=10)
for _ in range(2):  # two queries on one connection
    t.sendall(struct.pack(">H", len(q)) + q)
    n = struct.unpack(">H", t.recv(2))[0]
    a = b""
    while len(a) < n:
        a += t.recv(n - len(a))
assert a[:2] == b"\x42\x42" and a[3] & 0x0f == 0, a
addr = socket.inet_ntoa(a[-4:])
print("resolved", addr.split(".")[0])
s = socket.create_connection((addr, port), timeout=20)
s.sendall(b"GET /hello.txt HTTP/1.0\r\nHost: x\r\n\r\n")
data = b""
while True:
    c = s.recv(65536)
    if not c: break
    data += c
print(data.split(b"\r\n\r\n", 1)[1].decode(), end="")
)PY";
  write_file(ws_ / "tcpdns.py", client);
  const Outcome o = run({python3(), "tcpdns.py", "allowed.test", port()});
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(o.out, "resolved 198\nhello through capture\n") << o.err;
  expect_decisions("allowed.test", "allowed", "python3");
}

// ---------------------------------------------------------------------------------------
// Programs that honour the proxy variables: one decision each, by the ordinary listener
// (not captured): the connect to the bridge's 127.0.0.1:3128 is loopback, direct.
TEST_F(NetCapturePrograms, ProxyAwareProgramsAreNotCapturedTwice) {
  const char* py = R"PY(
import sys, urllib.request
print(urllib.request.urlopen(sys.argv[1], timeout=20).read().decode(), end="")
)PY";
  write_file(ws_ / "fetch.py", py);
  const std::string url = "http://allowed.test:" + port() + "/hello.txt";
  const Outcome o = run({python3(), "fetch.py", url});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "hello through capture\n");
  auto d = decisions();
  ASSERT_EQ(d.size(), 1u) << read_file(log_);
  EXPECT_EQ(d[0].find(R"("captured")"), std::string::npos) << d[0];
  EXPECT_NE(d[0].find(R"("proto":"http")"), std::string::npos) << d[0];
  // git over http honours them too (its proxy is http_proxy): a refused name is one
  // decision, not captured.
  const Outcome g = run({"git", "ls-remote", "http://denied.test:" + port() + "/repo"});
  EXPECT_NE(g.exit_code, 0);
  d = decisions();
  ASSERT_GE(d.size(), 1u) << read_file(log_);
  for (const auto& r : d) EXPECT_EQ(r.find(R"("captured")"), std::string::npos) << r;
}

// ---------------------------------------------------------------------------------------
// The opt-out: vigil.network.capture false is the old behaviour: the host's resolv.conf,
// no stub on the sandbox's 127.0.0.1:53, connect() not trapped (nothing recorded as
// captured). Only loopback is aimed at.
TEST_F(NetCapturePrograms, CaptureFalseKeepsTheOldBehaviour) {
  const char* client = R"PY(
import socket, sys
print(open("/etc/resolv.conf").read(), end="")
for port in (53, int(sys.argv[1])):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=10); print("CONNECTED", port)
    except OSError as e:
        print("no", port, type(e).__name__)
)PY";
  write_file(ws_ / "plain.py", client);
  const Outcome on = run({python3(), "plain.py", port()});
  EXPECT_EQ(on.exit_code, 0) << on.err;
  EXPECT_NE(on.out.find("nameserver 127.0.0.1\n"), std::string::npos) << on.out;
  EXPECT_NE(on.out.find("CONNECTED 53"), std::string::npos) << on.out;  // the stub

  write_file(cfg_ / "settings.json", R"({
  "filesystem": {"allowWrite": ["."]},
  "network": {"allowedDomains": ["allowed.test"]},
  "vigil": {"network": {"capture": false}}
})");
  const Outcome off = run({python3(), "plain.py", port()});
  EXPECT_EQ(off.exit_code, 0) << off.err;
  EXPECT_EQ(off.out.substr(0, off.out.find("no 53")), read_file("/etc/resolv.conf")) << off.out;
  EXPECT_NE(off.out.find("no 53 ConnectionRefusedError"), std::string::npos) << off.out;
  EXPECT_NE(off.out.find("no " + port() + " ConnectionRefusedError"), std::string::npos) << off.out;
  EXPECT_EQ(read_file(log_).find(R"("captured")"), std::string::npos) << read_file(log_);
  EXPECT_EQ(server_->log().find("GET"), std::string::npos) << server_->log();
}

// ---------------------------------------------------------------------------------------
// No packet leaves except through the proxy. Listeners on the host's loopback (TCP on
// 127.0.0.1 and ::1, UDP, and a "resolver" taking DNS over TCP); from inside, every
// route to them: each literal spelling (the sandbox's own loopback: nothing there), a
// name the proxy resolves to 127.0.0.1 (its address guard refuses loopback: no
// --test-allow-loopback here), UDP, DNS over TCP. Only refusals and records; the
// listeners see nothing.
const char* kHostListeners = R"PY(
import socket, sys, threading
def tcp(fam, addr):
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.bind((addr, 0)); s.listen(16)
    def loop():
        while True:
            c, p = s.accept(); print("GOT tcp", addr, flush=True); c.close()
    threading.Thread(target=loop, daemon=True).start()
    return s.getsockname()[1]
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("127.0.0.1", 0))
ports = [tcp(socket.AF_INET, "127.0.0.1"), tcp(socket.AF_INET6, "::1"), u.getsockname()[1],
         tcp(socket.AF_INET, "127.0.0.1")]
print("ports", *ports, flush=True)
while True:
    d, p = u.recvfrom(2048); print("GOT udp", d, flush=True)
)PY";

const char* kRoutesInside = R"PY(
import socket, struct, sys
tcp4, tcp6, udp, resolver = (int(x) for x in sys.argv[1:5])
def attempt(what, fn):
    try:
        fn(); print("REACHED", what)
    except OSError as e:
        print("no", what, e.errno)
def tcp(host, port):
    def go():
        ai = socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM)[0]
        s = socket.socket(ai[0], socket.SOCK_STREAM); s.settimeout(10); s.connect(ai[4])
        s.sendall(b"x"); s.settimeout(3)
        if s.recv(10) == b"": raise OSError(0, "closed")
    return go
for host in ["127.0.0.1", "127.1", "2130706433", "0x7f000001", "0177.0.0.1", "0.0.0.0",
             "localhost", "::1", "::ffff:127.0.0.1", "::ffff:7f00:1", "::", "allowed.test"]:
    attempt("tcp4 " + host, tcp(host, tcp4))
for host in ["::1", "::ffff:127.0.0.1", "allowed.test"]:
    attempt("tcp6 " + host, tcp(host, tcp6))
def udp_to(host, connected):
    def go():
        ai = socket.getaddrinfo(host, udp, 0, socket.SOCK_DGRAM)[0]
        s = socket.socket(ai[0], socket.SOCK_DGRAM); s.settimeout(3)
        if connected:
            s.connect(ai[4]); s.send(b"leak")
        else:
            s.sendto(b"leak", ai[4])
        s.recv(10)
    return go
for host in ["127.0.0.1", "::1", "::ffff:127.0.0.1", "allowed.test"]:
    attempt("udp " + host, udp_to(host, True))
    attempt("udp-sendto " + host, udp_to(host, False))
q = struct.pack(">HHHHHH", 7, 0x0100, 1, 0, 0, 0) + b"\x07example\x04test\x00" + struct.pack(">HH", 1, 1)
attempt("dns-tcp resolver", tcp("127.0.0.1", resolver))
def dns_tcp_host():
    t = socket.create_connection(("allowed.test", resolver), timeout=10)
    t.sendall(struct.pack(">H", len(q)) + q); t.settimeout(3)
    if t.recv(2) == b"": raise OSError(0, "closed")
attempt("dns-tcp allowed.test", dns_tcp_host)
)PY";

TEST_F(NetCapturePrograms, NoRouteReachesTheHostsLoopbackServices) {
  write_file(srv_ / "listeners.py", kHostListeners);
  Background listeners({python3(), srv_ / "listeners.py"}, srv_.path(), "listeners");
  const auto ports = listeners.wait_for("ports (\\d+ \\d+ \\d+ \\d+)", false);
  ASSERT_TRUE(ports) << listeners.err();
  std::vector<std::string> args = {python3(), "routes.py"};
  std::size_t start = 0;
  while (start < ports->size()) {
    const std::size_t sp = std::min(ports->find(' ', start), ports->size());
    args.push_back(ports->substr(start, sp - start));
    start = sp + 1;
  }
  write_file(ws_ / "routes.py", kRoutesInside);
  const Outcome o = run(args, /*allow_loopback=*/false);
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(o.out.find("REACHED"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("no tcp4 0x7f000001"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("no udp allowed.test"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("no dns-tcp allowed.test"), std::string::npos) << o.out;
  // Whatever went to the proxy was refused and recorded; nothing was allowed.
  const auto d = decisions();
  ASSERT_GE(d.size(), 3u) << read_file(log_);  // tcp4, tcp6, dns-tcp to allowed.test; udp
  for (const auto& r : d) {
    EXPECT_NE(r.find(R"("verdict":"denied")"), std::string::npos) << r;
    EXPECT_NE(r.find(R"("captured":true)"), std::string::npos) << r;
  }
  EXPECT_EQ(listeners.out().find("GOT"), std::string::npos) << listeners.out();
}

}  // namespace
}  // namespace vigil::test
