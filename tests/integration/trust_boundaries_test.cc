// Trust boundaries of an agent session (issue 31; docs/threat-model.md), through the real
// clients: the thin client (`vigil run` with VIGIL_SESSION) against a second local user
// squatting its socket, the workspace a session fixed at its start, and the command's
// environment, which must never reach a process on the host side (bwrap), through
// `vigil run`, the thin client, and `vigil serve` driven by clients/python and clients/node.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "supervisor/core/base/unique_fd.h"
#include "tests/integration/agent_session_harness.h"
#include "tests/integration/harness.h"
#include "tests/integration/other_user.h"
#include "tests/integration/proxy_harness.h"

namespace vigil::test {
namespace {

std::string source_dir() { return std::string(VIGIL_TEST_DATA_DIR) + "/../.."; }

// VIGIL_SESSION='...' from `vigil session start`'s output.
std::string handle_of(const std::string& out) {
  const auto at = out.find("VIGIL_SESSION='");
  if (at == std::string::npos) return "";
  const auto from = at + 15;
  return out.substr(from, out.find('\'', from) - from);
}

// A name in the shared temp dir nobody has taken yet.
std::string shared_name(const std::string& what) {
  std::random_device rd;
  return "/tmp/vigil-" + what + "-" + std::to_string(::getpid()) + "-" + std::to_string(rd());
}

TEST(TrustBoundaries, WithoutARuntimeDirTheSessionSocketIsNeverInASharedDirectory) {
  TempDir ws, state;
  const std::map<std::string, std::string> env = {{"XDG_RUNTIME_DIR", ""},
                                                  {"XDG_STATE_HOME", state.path()}};
  auto start = run_vigil({"session", "start", "--log", state / "s.jsonl"}, ws.path(), 30, env);
  ASSERT_EQ(start.exit_code, 0) << start.err;
  const std::string handle = handle_of(start.out);
  EXPECT_EQ(handle.rfind(state / "vigil/run/vigil-session-", 0), 0u) << handle;
  EXPECT_EQ(handle.rfind("/tmp/vigil-session-", 0), std::string::npos) << handle;
  auto end = run_vigil({"session", "end", handle}, ws.path(), 30, env);
  EXPECT_EQ(end.exit_code, 0) << end.err;
}

// `vigil session end` tells the shell to forget the handle, as `ssh-agent -k` does; the
// variable left behind gives an error that names the fix.
TEST(TrustBoundaries, SessionEndPrintsTheUnsetLinesAndAStaleHandleNamesTheFix) {
  TempDir ws;
  Session s(ws.path());
  auto end = s.end();
  ASSERT_EQ(end.exit_code, 0) << end.err;
  EXPECT_EQ(end.out, "unset VIGIL_SESSION;\nunset VIGIL_SESSION_PID;\n");
  auto stale = run_vigil({"run", "--", "true"}, ws.path(), 30, s.env());
  EXPECT_EQ(stale.exit_code, 125) << stale.err;
  EXPECT_NE(stale.err.find("it has ended"), std::string::npos) << stale.err;
  EXPECT_NE(stale.err.find("unset VIGIL_SESSION VIGIL_SESSION_PID"), std::string::npos) << stale.err;
  // `eval "$(vigil session end)"` on a stale handle still clears the shell.
  auto again = s.end();
  EXPECT_NE(again.exit_code, 0);
  EXPECT_EQ(again.out, "unset VIGIL_SESSION;\nunset VIGIL_SESSION_PID;\n");
}

// Another local user listens where VIGIL_SESSION points (a name in /tmp it could take):
// the thin client must send it nothing (argv, cwd, environment, stdio) and say why.
TEST(TrustBoundaries, AnotherUsersListenerAtTheHandleIsNeverSentTheCommand) {
  VIGIL_NEED_OTHER_USER(other);
  TempDir ws;
  const std::string dir = shared_name("squat");
  const std::string sock = dir + "/agent.sock";
  ASSERT_EQ(act_as(other, OtherOp::kMkdir, {dir}).error, 0);
  auto listening = act_as(other, OtherOp::kListen, {sock});
  ASSERT_EQ(listening.error, 0);
  ASSERT_TRUE(listening.fd);
  // The squatter: takes whatever connects, and reads what it is sent.
  std::atomic<bool> done{false};
  std::string received;
  std::thread squatter([&] {
    while (!done) {
      pollfd p{listening.fd.get(), POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      UniqueFd conn(::accept4(listening.fd.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!conn) continue;
      received += "<connected>";
      pollfd c{conn.get(), POLLIN, 0};
      char buf[65536];
      while (::poll(&c, 1, 1000) > 0) {
        const ssize_t n = ::recv(conn.get(), buf, sizeof buf, 0);
        if (n <= 0) break;
        received.append(buf, static_cast<std::size_t>(n));
      }
    }
  });
  auto o = run_vigil({"run", "--", "sh", "-c", "echo ran"}, ws.path(), 30,
                     {{"VIGIL_SESSION", sock}, {"SECRET_TOKEN", "tok-31a"}});
  done = true;
  squatter.join();
  (void)act_as(other, OtherOp::kUnlink, {sock});
  (void)act_as(other, OtherOp::kRmdir, {dir});
  EXPECT_EQ(received, "") << "the thin client talked to another user's socket";
  EXPECT_EQ(received.find("tok-31a"), std::string::npos);
  EXPECT_EQ(o.exit_code, 125) << o.err;
  EXPECT_EQ(o.out, "");
  EXPECT_NE(o.err.find("refusing the vigil session"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("belongs to uid " + std::to_string(other.uid)), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("unset VIGIL_SESSION"), std::string::npos) << o.err;
}

// After `vigil session end` the name is free while the shell still exports it: another
// user cannot take it, because it was never in a directory another user can write.
TEST(TrustBoundaries, AnEndedSessionsNameCannotBeRetakenByAnotherUser) {
  VIGIL_NEED_OTHER_USER(other);
  TempDir ws, state;
  const std::map<std::string, std::string> env = {{"XDG_RUNTIME_DIR", ""},
                                                  {"XDG_STATE_HOME", state.path()}};
  auto start = run_vigil({"session", "start"}, ws.path(), 30, env);
  ASSERT_EQ(start.exit_code, 0) << start.err;
  const std::string handle = handle_of(start.out);
  ASSERT_FALSE(handle.empty()) << start.out;
  ASSERT_EQ(run_vigil({"session", "end", handle}, ws.path(), 30, env).exit_code, 0);
  const std::string dir = handle.substr(0, handle.rfind('/'));
  const auto taken = act_as(other, OtherOp::kMkdir, {dir});
  if (taken.error == 0) {
    (void)act_as(other, OtherOp::kRmdir, {dir});
    FAIL() << "another user recreated the ended session's directory " << dir;
  }
  auto env_run = env;
  env_run["VIGIL_SESSION"] = handle;
  auto o = run_vigil({"run", "--", "true"}, ws.path(), 30, env_run);
  EXPECT_EQ(o.exit_code, 125) << o.err;
  EXPECT_NE(o.err.find("unset VIGIL_SESSION"), std::string::npos) << o.err;
}

// The thin client from a directory outside the session's workspace: refused, nothing
// written there (a command's cwd never becomes a writable root).
TEST(TrustBoundaries, AThinClientOutsideTheWorkspaceIsRefused) {
  TempDir ws, home;
  ::mkdir((ws / "sub").c_str(), 0755);
  Session s(ws.path());
  auto o = run_vigil({"run", "--", "sh", "-c", "echo key >> authorized_keys"}, home.path(), 60,
                     s.env());
  EXPECT_NE(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("outside this session's workspace"), std::string::npos) << o.err;
  EXPECT_FALSE(exists(home / "authorized_keys"));
  // Inside it, anywhere: runs there, and writes there.
  auto in = run_vigil({"run", "--", "sh", "-c", "pwd; echo ok > made"}, ws / "sub", 60, s.env());
  EXPECT_EQ(in.exit_code, 0) << in.err;
  EXPECT_TRUE(exists(ws / "sub/made"));
  EXPECT_EQ(s.end().exit_code, 0);
}

// A shared object that records when it is loaded into bwrap (by /proc/self/exe), in a
// directory only the host can write: the command's own loads (inside the sandbox) are
// not recorded.
class HostEnvironment : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access("/usr/bin/cc", X_OK) != 0) GTEST_SKIP() << "no C compiler (cc) to build the probe";
    marker_ = outside_ / "bwrap-loaded-it";
    const std::string src = ws_ / "probe.c";
    write_file(src, R"C(#include <fcntl.h>
#include <string.h>
#include <unistd.h>
__attribute__((constructor)) static void probe(void) {
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return;
  exe[n] = 0;
  const char* base = strrchr(exe, '/');
  if (strcmp(base ? base + 1 : exe, "bwrap") != 0) return;
  int fd = open(MARKER, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd >= 0) (void)!write(fd, "x", 1);  /* left open: the process goes on */
}
)C");
    so_ = ws_ / "libprobe.so";
    auto built = run_program({"/usr/bin/cc", "-shared", "-fPIC", "-DMARKER=\"" + marker_ + "\"",
                              "-o", so_, src},
                             outside_.path(), 60);
    ASSERT_EQ(built.exit_code, 0) << built.err;
  }
  TempDir ws_, outside_;
  std::string so_, marker_;
};

TEST_F(HostEnvironment, LdPreloadOfVigilRunReachesTheCommandNotBwrap) {
  auto o = run_vigil({"run", "--", "sh", "-c", "printf '%s|%s' \"$LD_PRELOAD\" \"$PROBE_VAR\""},
                     ws_.path(), 60,
                     {{"LD_PRELOAD", so_}, {"PROBE_VAR", "a b=c"}, {"GCONV_PATH", ws_.path()}});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, so_ + "|a b=c");
  EXPECT_FALSE(exists(marker_)) << "LD_PRELOAD ran code in bwrap, on the host";
}

TEST_F(HostEnvironment, LdPreloadThroughTheThinClientNeverReachesBwrap) {
  Session s(ws_.path());
  auto env = s.env();
  env["LD_PRELOAD"] = so_;
  auto o = run_vigil({"run", "--", "sh", "-c", "printf '%s' \"$LD_PRELOAD\""}, ws_.path(), 60, env);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, so_);
  EXPECT_FALSE(exists(marker_)) << "LD_PRELOAD ran code in bwrap, on the host";
  EXPECT_EQ(s.end().exit_code, 0);
}

// `vigil serve`'s run.env, through the shipped clients.
constexpr const char* kPyEnv = R"PY(
import sys
sys.path.insert(0, sys.argv[1])
from vigil_client import VigilSession
vigil, ws, so = sys.argv[2:5]
out = []
with VigilSession(vigil, workspace=ws) as s:
    r = s.run(["sh", "-c", 'printf "%s|%s" "$LD_PRELOAD" "$PROBE_VAR"'],
              env={"PATH": "/usr/bin:/bin", "LD_PRELOAD": so, "LD_LIBRARY_PATH": ws,
                   "PROBE_VAR": "py"},
              on_output=lambda st, d: out.append(d))
print(b"".join(out).decode() + " " + str(r["exit_code"]))
)PY";

constexpr const char* kNodeEnv = R"JS(
const [clients, vigil, ws, so] = process.argv.slice(1);
const { VigilSession } = require(clients + '/vigil_client.js');
(async () => {
  const s = new VigilSession({ vigil, workspace: ws });
  let out = '';
  const r = await s.run(['sh', '-c', 'printf "%s|%s" "$LD_PRELOAD" "$PROBE_VAR"'], {
    env: { PATH: '/usr/bin:/bin', LD_PRELOAD: so, LD_LIBRARY_PATH: ws, PROBE_VAR: 'node' },
    onOutput: (stream, buf) => { out += buf.toString(); },
  });
  await s.close();
  console.log(out + ' ' + r.exit_code);
})();
)JS";

TEST_F(HostEnvironment, RunEnvOfServeClientsReachesTheCommandNotBwrap) {
  auto py = run_program({python3(), "-c", kPyEnv, source_dir() + "/clients/python", vigil_bin(),
                         ws_.path(), so_},
                        outside_.path(), 120);
  EXPECT_EQ(py.exit_code, 0) << py.err;
  EXPECT_EQ(py.out, so_ + "|py 0\n") << py.err;
  EXPECT_FALSE(exists(marker_)) << "run.env ran code in bwrap, on the host (python client)";
  std::string node = "/usr/bin/node";
  if (::access(node.c_str(), X_OK) != 0) node = "/usr/bin/nodejs";
  if (::access(node.c_str(), X_OK) != 0) {
    if (std::getenv("VIGIL_REQUIRE_TOOLS") != nullptr) FAIL() << "node is not installed";
    GTEST_SKIP() << "node is not installed (tools/bootstrap.sh installs nodejs)";
  }
  auto js = run_program({node, "-e", kNodeEnv, source_dir() + "/clients/node", vigil_bin(),
                         ws_.path(), so_},
                        outside_.path(), 120);
  EXPECT_EQ(js.exit_code, 0) << js.err;
  EXPECT_EQ(js.out, so_ + "|node 0\n") << js.err;
  EXPECT_FALSE(exists(marker_)) << "run.env ran code in bwrap, on the host (node client)";
}

}  // namespace
}  // namespace vigil::test
