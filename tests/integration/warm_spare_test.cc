// A warm session's spare sandbox (supervisor/command/spare_sandbox.h), with the real vigil, bwrap
// and vigil-init: taken by the next command when nothing changed (session.end counts
// commands.warm), discarded when the workspace or the settings changed the plan (the
// command then runs under the new plan), and gone with a killed supervisor.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "tests/integration/agent_session_harness.h"
#include "tests/integration/harness.h"
#include "tests/integration/proxy_harness.h"

namespace vigil::test {
namespace {

// The session's counters in its session.end.
std::map<std::string, std::uint64_t> end_counters(const std::string& log) {
  for (const auto& e : records(log)) {
    if (e.kind() == events::Kind::kSessionEnd) return std::get<events::SessionEnd>(e.body).counters;
  }
  ADD_FAILURE() << "no session.end in " << log;
  return {};
}

// The session's spare: its vigil-init, waiting (its argv names the session's proxy socket
// under the session's runtime directory, and the placeholder command).
std::vector<int> spare_pids(const Session& s) {
  std::vector<int> out;
  for (const int pid : pids_with_marker(s.runtime())) {
    if (read_file("/proc/" + std::to_string(pid) + "/cmdline").find("vigil-spare") != std::string::npos)
      out.push_back(pid);
  }
  return out;
}

std::uint64_t count(const std::map<std::string, std::uint64_t>& c, const std::string& name) {
  auto it = c.find(name);
  return it == c.end() ? 0 : it->second;
}

TEST(WarmSpare, TheNextCommandTakesTheSpareWhenNothingChanged) {
  TempDir ws;
  Session s(ws.path());
  ASSERT_FALSE(s.handle().empty());
  for (int i = 0; i < 5; ++i) {
    // Its own environment (the client's, with the proxy's variables set), its own
    // working directory and stdio, its exit status.
    auto o = s.run({"sh", "-c", "echo \"$XDG_STATE_HOME|${HTTPS_PROXY:+proxied}|$(pwd)\"; "
                                "echo e >&2; exit " + std::to_string(i)});
    EXPECT_EQ(o.exit_code, i) << o.err;
    EXPECT_EQ(o.out, s.env()["XDG_STATE_HOME"] + "|proxied|" + ws.path() + "\n");
    EXPECT_EQ(o.err, "e\n");
  }
  ASSERT_EQ(s.end().exit_code, 0);
  const auto c = end_counters(s.log());
  EXPECT_EQ(count(c, "commands"), 5u);
  // The first command had no spare; each of the four after it took one.
  EXPECT_EQ(count(c, "commands.warm"), 4u);
  EXPECT_EQ(count(c, "spares.discarded"), 0u);
  auto report = verify_log(s.log());
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_TRUE(report->ok) << report->why;
}

TEST(WarmSpare, AProtectedFileMadeOnTheHostDiscardsTheSpare) {
  TempDir ws;
  Session s(ws.path());
  ASSERT_EQ(s.run({"true"}).exit_code, 0);
  // The spare is built (its plan made before .bashrc existed) and waits.
  ASSERT_TRUE(wait_for([&] { return !spare_pids(s).empty(); }));
  write_file(ws / ".bashrc", "mine\n");
  // The spare's plan has no read-only .bashrc (it did not exist): the fresh one does,
  // and the command runs under it.
  auto o = s.run({"sh", "-c", "echo evil >> .bashrc"});
  EXPECT_NE(o.exit_code, 0) << o.err;
  EXPECT_EQ(read_file(ws / ".bashrc"), "mine\n");
  ASSERT_EQ(s.end().exit_code, 0);
  const auto c = end_counters(s.log());
  EXPECT_EQ(count(c, "spares.discarded"), 1u);
  EXPECT_EQ(count(c, "commands.warm"), 0u);
}

TEST(WarmSpare, ASettingsChangeDiscardsTheSpare) {
  TempDir ws, conf;
  const std::string settings = conf / "settings.json";
  write_file(settings, R"({"filesystem": {"allowWrite": ["."]}})");
  write_file(ws / "secret.txt", "orig\n");
  Session s(ws.path(), {"--settings", settings});
  // Writable under the first settings.
  auto first = s.run({"sh", "-c", "echo ok > other.txt"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_TRUE(wait_for([&] { return !spare_pids(s).empty(); }));
  write_file(settings, R"({"filesystem": {"allowWrite": ["."], "denyWrite": ["secret.txt"]}})");
  auto o = s.run({"sh", "-c", "echo evil > secret.txt"});
  EXPECT_NE(o.exit_code, 0) << o.err;
  EXPECT_EQ(read_file(ws / "secret.txt"), "orig\n");
  ASSERT_EQ(s.end().exit_code, 0);
  const auto c = end_counters(s.log());
  EXPECT_EQ(count(c, "spares.discarded"), 1u);
  EXPECT_EQ(count(c, "commands.warm"), 0u);
}

TEST(WarmSpare, AKilledSupervisorTakesItsSpareWithIt) {
  TempDir ws;
  Session s(ws.path());
  ASSERT_EQ(s.run({"true"}).exit_code, 0);
  ASSERT_TRUE(wait_for([&] { return !spare_pids(s).empty(); }));
  ASSERT_EQ(::kill(s.pid(), SIGKILL), 0);
  EXPECT_TRUE(wait_for([&] { return pids_with_marker(s.runtime()).empty(); }))
      << "a process of the killed session is left";
}

// A session that ends while its spare sandbox is still being set up leaves nothing:
// bwrap's child waits for bwrap's go-ahead before its --die-with-parent is in force, so
// the kill reaches bwrap's process group too (supervisor/launch/sandbox_kill.h). Seen
// before: spares of ended `serve` sessions, ppid 1, blocked in eventfd_read for ever.
// Here `vigil serve` runs one command and its input ends at once, many times over (as a
// harness that starts one serve per task does), so the end meets the spare's start.
TEST(WarmSpare, ASessionEndedWhileItsSpareStartsLeavesNothing) {
  TempDir ws, runtime, state;
  ::chmod(runtime.path().c_str(), 0700);
  const std::map<std::string, std::string> env = {{"XDG_RUNTIME_DIR", runtime.path()},
                                                  {"XDG_STATE_HOME", state.path()}};
  const std::string request =
      R"({"jsonrpc":"2.0","id":1,"method":"run","params":{"argv":["true"]}})";
  for (int i = 0; i < 12; ++i) {
    const Outcome o = run_program(
        {"sh", "-c", "printf '%s\\n' \"$1\" | \"$2\" serve", "sh", request, vigil_bin()}, state.path(),
        60, env);
    EXPECT_EQ(o.exit_code, 0) << o.err;
    EXPECT_NE(o.out.find("\"exit_code\":0"), std::string::npos) << o.out << o.err;
  }
  EXPECT_TRUE(wait_for([&] { return pids_with_marker(runtime.path()).empty(); }))
      << "a process of an ended session is left";
}

}  // namespace
}  // namespace vigil::test
