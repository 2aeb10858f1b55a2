// network.allowUnixSockets with the real bwrap: vigil-init brokers connect() for unix
// sockets. A unix socket server on the host (this test process) answers each line with
// "echo:" + the line; the command inside the sandbox is python3. Each test checks the
// command's own view (what connect() said, what came back) AND a host-side fact (what the
// server received), plus the line the model reads and the record in the session log.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "supervisor/core/base/unique_fd.h"
#include "supervisor/launch/sandbox_plan.h"
#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

// A stream server at `path` on the host: answers each connection's first line, records it.
class EchoServer {
 public:
  explicit EchoServer(const std::string& path) {
    listener_.reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
    int stop[2];
    ok_ = listener_ && ::bind(listener_.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
          ::listen(listener_.get(), 16) == 0 && ::pipe2(stop, O_CLOEXEC) == 0;
    if (!ok_) return;
    stop_read_.reset(stop[0]);
    stop_write_.reset(stop[1]);
    thread_ = std::thread([this] { serve(); });
  }
  ~EchoServer() {
    if (thread_.joinable()) {
      (void)!::write(stop_write_.get(), "x", 1);
      thread_.join();
    }
  }
  bool ok() const { return ok_; }
  std::string received() {
    const std::lock_guard<std::mutex> lock(mu_);
    return received_;
  }

 private:
  void serve() {
    for (;;) {
      pollfd p[2] = {{listener_.get(), POLLIN, 0}, {stop_read_.get(), POLLIN, 0}};
      if (::poll(p, 2, -1) < 0) continue;
      if (p[1].revents != 0) return;
      UniqueFd c(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!c) continue;
      pollfd in{c.get(), POLLIN, 0};
      if (::poll(&in, 1, 5000) <= 0) continue;  // bounded: a client that never writes
      char buf[256];
      const ssize_t n = ::read(c.get(), buf, sizeof buf);
      if (n <= 0) continue;
      const std::string line(buf, static_cast<std::size_t>(n));
      {
        const std::lock_guard<std::mutex> lock(mu_);
        received_ += line;
      }
      const std::string reply = "echo:" + line;
      // A client that did not wait for the reply must not kill the test (SIGPIPE).
      (void)!::send(c.get(), reply.data(), reply.size(), MSG_NOSIGNAL);
    }
  }
  UniqueFd listener_;
  UniqueFd stop_read_, stop_write_;
  bool ok_ = false;
  std::thread thread_;
  std::mutex mu_;
  std::string received_;
};

// Tries each "kind:target" argument and prints one line per try: the reply, or the errno.
const char* kClient = R"PY(
import errno, os, socket, sys
def out(r): print(r, flush=True)
for arg in sys.argv[1:]:
    kind, _, target = arg.partition(':')
    try:
        if kind == 'dgram':
            socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); out('dgram made'); continue
        if kind == 'cd':
            os.chdir(target); out('cd'); continue
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET if kind == 'seq' else socket.SOCK_STREAM)
        s.connect(('\0' + target) if kind == 'abstract' else target)
        s.sendall(b'ping ' + target.encode() + b'\n')
        out(s.recv(256).decode().strip())
    except OSError as e:
        out(errno.errorcode[e.errno])
)PY";

std::string settings(const TempDir& dir, const std::string& network) {
  const std::string path = dir / "settings.json";
  write_file(path, R"({"filesystem": {"allowWrite": ["."]}, "network": )" + network + "}");
  return path;
}

std::vector<std::string> client_run(const std::string& settings_path,
                                    const std::vector<std::string>& tries) {
  std::vector<std::string> args = {"run", "--settings", settings_path, "--", "python3", "-c", kClient};
  args.insert(args.end(), tries.begin(), tries.end());
  return args;
}

TEST(UnixSockets, ListedPathConnectsOthersAreRefusedWithALine) {
  TempDir ws, host, other, conf;
  EchoServer allowed(host / "agent.sock");
  EchoServer refused(other / "docker.sock");
  ASSERT_TRUE(allowed.ok() && refused.ok());
  ASSERT_EQ(::symlink((other / "docker.sock").c_str(), (ws / "innocent.sock").c_str()), 0);
  ASSERT_EQ(::symlink((host / "agent.sock").c_str(), (ws / "alias.sock").c_str()), 0);
  const std::string s = settings(conf, R"({"allowUnixSockets": [")" + host / "agent.sock" + R"("]})");
  auto o = run_vigil(client_run(s, {"stream:" + host / "agent.sock",       // listed
                                    "stream:" + other / "docker.sock",     // not listed
                                    "stream:" + ws / "innocent.sock",      // a link to it
                                    "stream:" + ws / "alias.sock",         // a link to the listed
                                    "stream:" + host / "missing.sock",     // no such socket
                                    "cd:" + host.path(), "stream:agent.sock",  // relative
                                    "dgram:", "abstract:vigil-test-abstract"}),
                     ws.path());
  EXPECT_EQ(o.out,
            "echo:ping " + host / "agent.sock" + "\n" +  // the data round-trips
                "EACCES\nEACCES\n"
                "echo:ping " + ws / "alias.sock" + "\n"
                "ENOENT\n"  // the kernel's own answer, no line
                "cd\n"
                "echo:ping agent.sock\n"
                "EPERM\n"     // datagram socket
                "EACCES\n")  // abstract name, not listed
      << o.err;
  // Host side: the listed server got exactly the three connections; the other nothing.
  EXPECT_EQ(allowed.received(), "ping " + host / "agent.sock" + "\nping " + ws / "alias.sock" +
                                    "\nping agent.sock\n");
  EXPECT_EQ(refused.received(), "");
  // The model hears each refusal, with the way forward; a missing socket is not one.
  const auto [before, log_line] = split_log_line(o.err);
  const std::string hint = "; to allow a path, add it to network.allowUnixSockets)";
  EXPECT_NE(before.find("deny socket AF_UNIX " + other / "docker.sock" +
                        " (not in network.allowUnixSockets (exact paths only)" + hint + " (x2)"),
            std::string::npos)
      << before;
  EXPECT_NE(before.find("deny socket AF_UNIX SOCK_DGRAM (SOCK_DGRAM can send to any path"),
            std::string::npos)
      << before;
  EXPECT_NE(before.find("deny socket AF_UNIX @vigil-test-abstract (an abstract socket"),
            std::string::npos)
      << before;
  EXPECT_EQ(before.find("missing.sock"), std::string::npos) << before;
  // The log records allowed and refused connects alike.
  ASSERT_FALSE(log_line.empty()) << o.err;
  std::string log_path = log_line.substr(std::string("vigil: session log: ").size());
  while (!log_path.empty() && (log_path.back() == '\n' || log_path.back() == ' ')) log_path.pop_back();
  const std::string log = read_file(log_path);
  EXPECT_NE(log.find(R"("kind":"net.unix","pid")"), std::string::npos) << log;
  EXPECT_NE(log.find(R"("resolved":")" + host / "agent.sock" + R"(","verdict":"allowed")"),
            std::string::npos);
  EXPECT_NE(log.find(R"("resolved":")" + other / "docker.sock" + R"(","verdict":"denied")"),
            std::string::npos);
}

// A second thread rewrites the address between the listed path and another while the
// first connects in a loop: vigil-init decides on its one copy and connects to the inode
// it judged, so the other server never hears from the sandbox, whatever the interleaving.
TEST(UnixSockets, AnAddressRewrittenDuringTheCallNeverReachesAnotherSocket) {
  TempDir ws, host, conf;
  // Same length, so a torn copy is still one of the two names or a mix of them.
  EchoServer allowed(host / "a.sock");
  EchoServer other(host / "b.sock");
  ASSERT_TRUE(allowed.ok() && other.ok());
  const std::string s = settings(conf, R"({"allowUnixSockets": [")" + host / "a.sock" + R"("]})");
  const char* racer = R"PY(
import ctypes, socket, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
class Addr(ctypes.Structure):
    _fields_ = [('family', ctypes.c_ushort), ('path', ctypes.c_char * 108)]
a_name, b_name = sys.argv[1].encode(), sys.argv[2].encode()
addr = Addr(socket.AF_UNIX, a_name)
stop = False
def flip():
    while not stop:
        ctypes.memmove(ctypes.addressof(addr) + 2, b_name, len(b_name))
        ctypes.memmove(ctypes.addressof(addr) + 2, a_name, len(a_name))
t = threading.Thread(target=flip)
t.start()
connected = refused = 0
try:
    for _ in range(400):
        s = socket.socket(socket.AF_UNIX)
        if libc.connect(s.fileno(), ctypes.byref(addr), ctypes.sizeof(addr)) == 0:
            connected += 1
            s.sendall(b'x\n')
        else:
            refused += 1
        s.close()
finally:
    stop = True
    t.join()
print('connected' if connected else 'none', 'refused' if refused else 'none')
)PY";
  auto o = run_vigil({"run", "--settings", s, "--", "python3", "-c", racer, host / "a.sock",
                      host / "b.sock"},
                     ws.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("connected"), std::string::npos) << o.out << o.err;
  EXPECT_EQ(other.received(), "") << "a rewritten address reached the unlisted socket";
}

TEST(UnixSockets, SeqpacketToAStreamServerGetsTheKernelsAnswer) {
  TempDir ws, host, conf;
  EchoServer server(host / "s.sock");
  ASSERT_TRUE(server.ok());
  const std::string s = settings(conf, R"({"allowUnixSockets": [")" + host / "s.sock" + R"("]})");
  auto o = run_vigil(client_run(s, {"seq:" + host / "s.sock"}), ws.path());
  // vigil-init connected the caller's own socket: the type mismatch is the kernel's.
  EXPECT_EQ(o.out, "EPROTOTYPE\n") << o.err;
  EXPECT_EQ(server.received(), "");
}

// With no list every unix socket is refused, and (where the gatekeeper runs the broker)
// each refusal is told with the key that lifts it: the plain filter's EPERM was silent.
TEST(UnixSockets, WithoutTheListEverySocketIsRefusedWithALine) {
  TempDir ws, host, conf;
  EchoServer server(host / "s.sock");
  ASSERT_TRUE(server.ok());
  const std::string s = settings(conf, R"({"allowedDomains": []})");
  auto o = run_vigil(client_run(s, {"stream:" + host / "s.sock", "dgram:"}), ws.path());
  EXPECT_EQ(server.received(), "");
  if (!gatekeeper_in_force()) {
    EXPECT_EQ(o.out, "EPERM\nEPERM\n") << o.err;
    GTEST_SKIP() << "kernel < 5.14: no broker, unix sockets refused by the plain filter (EPERM)";
  }
  EXPECT_EQ(o.out, "EACCES\nEPERM\n") << o.err;
  EXPECT_NE(o.err.find("deny socket AF_UNIX " + host / "s.sock" +
                       " (not in network.allowUnixSockets (exact paths only); to allow a path, "
                       "add it to network.allowUnixSockets)"),
            std::string::npos)
      << o.err;
  EXPECT_NE(o.err.find("deny socket AF_UNIX SOCK_DGRAM"), std::string::npos) << o.err;
}

TEST(UnixSockets, AllowAllIsHonouredWithALoudWarning) {
  TempDir ws, host, conf;
  EchoServer server(host / "any.sock");
  ASSERT_TRUE(server.ok());
  const std::string s = settings(conf, R"({"allowAllUnixSockets": true})");
  auto o = run_vigil(client_run(s, {"stream:" + host / "any.sock", "dgram:"}), ws.path());
  EXPECT_EQ(o.out, "echo:ping " + host / "any.sock" + "\ndgram made\n") << o.err;
  EXPECT_EQ(server.received(), "ping " + host / "any.sock" + "\n");
  EXPECT_NE(o.err.find("WARNING: network.allowAllUnixSockets=true"), std::string::npos) << o.err;
  auto e = run_vigil({"explain", "--settings", s}, ws.path());
  EXPECT_NE(e.out.find("# network: WARNING: every unix socket is allowed"), std::string::npos)
      << e.out << e.err;
}

TEST(UnixSockets, ARelativeEntryIsRefusedWithTheFix) {
  TempDir ws, conf;
  const std::string s = settings(conf, R"({"allowUnixSockets": ["~user/x.sock"]})");
  auto o = run_vigil({"run", "--settings", s, "--", "true"}, ws.path());
  EXPECT_NE(o.exit_code, 0);
  EXPECT_NE(o.err.find("network.allowUnixSockets[0]"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("full path, or @name"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace vigil::test
