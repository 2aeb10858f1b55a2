// `vigil session start|end` and `vigil run` as its thin client, with the real vigil,
// bwrap and vigil-init: one log for many commands, commands attributed when they run at
// once, a killed supervisor leaves nothing behind, only its user may connect, and a
// harness reading `vigil run`'s stderr sees the same block as without a session.
#include <dirent.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "supervisor/core/base/unique_fd.h"
#include "supervisor/log/session_log.h"
#include "supervisor/agent/session_wire.h"
#include "tests/integration/gatekeeper_kernel.h"
#include "tests/integration/agent_session_harness.h"
#include "tests/integration/harness.h"
#include "tests/integration/other_user.h"
#include "tests/support/bounded_wait.h"

namespace vigil::test {
namespace {

TEST(AgentSession, FiftyCommandsGiveOneLogThatVerifies) {
  TempDir ws;
  Session s(ws.path());
  ASSERT_FALSE(s.handle().empty());
  for (int i = 0; i < 50; ++i) {
    auto o = s.run({"sh", "-c", "echo out-" + std::to_string(i) + "; echo err >&2; exit " +
                                    std::to_string(i % 7)});
    ASSERT_EQ(o.exit_code, i % 7) << o.err;
    EXPECT_EQ(o.out, "out-" + std::to_string(i) + "\n");
    EXPECT_EQ(o.err, "err\n");
  }
  ASSERT_EQ(s.end().exit_code, 0);
  ASSERT_TRUE(wait_for([&] { return ::kill(s.pid(), 0) != 0; }));
  auto report = verify_log(s.log());
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_TRUE(report->ok) << report->why;
  EXPECT_TRUE(report->complete) << report->why;
  // 50 commands, each framed by its start and end, every record between them carrying
  // its id; the ends carry the statuses in order.
  std::map<std::uint64_t, int> open;
  int starts = 0, ends = 0;
  for (const auto& e : records(s.log())) {
    if (e.kind() == events::Kind::kSessionStart || e.kind() == events::Kind::kSessionEnd) {
      EXPECT_FALSE(e.cmd.has_value());
      continue;
    }
    ASSERT_TRUE(e.cmd.has_value()) << events::serialize(e);
    if (e.kind() == events::Kind::kCommandStart) {
      ++starts;
      open[*e.cmd] = 1;
    } else if (e.kind() == events::Kind::kCommandEnd) {
      const auto& end = std::get<events::CommandEnd>(e.body);
      EXPECT_EQ(end.exit_code.value_or(-1), static_cast<int>((*e.cmd - 1) % 7));
      EXPECT_EQ(open.erase(*e.cmd), 1u);
      ++ends;
    } else {
      EXPECT_EQ(open.count(*e.cmd), 1u) << "a record outside its command: " << events::serialize(e);
    }
  }
  EXPECT_EQ(starts, 50);
  EXPECT_EQ(ends, 50);
}

TEST(AgentSession, EightConcurrentCommandsAreAttributedToThemselves) {
  TempDir ws, outside;
  Session s(ws.path());
  std::vector<Outcome> outs(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      const std::string n = std::to_string(i);
      // Each one waits for all eight to be running, so they overlap for real.
      outs[i] = s.run({"sh", "-c",
                       "echo > started-" + n + "; while [ $(ls | grep -c started-) -lt 8 ]; do "
                       "sleep 0.01; done; echo mine-" + n + "; echo x 2>/dev/null > '" +
                           (outside / ("deny-" + n)) + "'; exit " + n});
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < 8; ++i) {
    const std::string n = std::to_string(i);
    EXPECT_EQ(outs[i].exit_code, i) << outs[i].err;
    EXPECT_EQ(outs[i].out, "mine-" + n + "\n");
    // Its own denial in its own block, and nobody else's.
    EXPECT_NE(outs[i].err.find(outside / ("deny-" + n)), std::string::npos) << outs[i].err;
    for (int j = 0; j < 8; ++j) {
      if (j != i) {
        EXPECT_EQ(outs[i].err.find(outside / ("deny-" + std::to_string(j))), std::string::npos);
      }
    }
  }
  ASSERT_EQ(s.end().exit_code, 0);
  ASSERT_TRUE(wait_for([&] { return ::kill(s.pid(), 0) != 0; }));
  auto report = verify_log(s.log());
  ASSERT_TRUE(report && report->ok);
  // In the log: each command's records name the right one.
  std::map<std::uint64_t, std::string> which;  // cmd id -> its "n"
  for (const auto& e : records(s.log())) {
    if (const auto* st = std::get_if<events::CommandStart>(&e.body)) {
      const auto at = st->argv.back().find("mine-");
      which[*e.cmd] = st->argv.back().substr(at + 5, 1);
    } else if (const auto* w = std::get_if<events::FsWrite>(&e.body)) {
      if (w->path.find("deny-") == std::string::npos) continue;
      ASSERT_TRUE(e.cmd.has_value());
      EXPECT_EQ(w->path, outside / ("deny-" + which[*e.cmd]));
    } else if (const auto* o = std::get_if<events::IoStdout>(&e.body)) {
      EXPECT_EQ(o->data, "mine-" + which[*e.cmd] + "\n");
    }
  }
  EXPECT_EQ(which.size(), 8u);
}

TEST(AgentSession, KillingTheSupervisorLeavesNoProcessAndNoPlaceholder) {
  TempDir ws;
  ASSERT_FALSE(exists(ws / ".bashrc"));
  Session s(ws.path());
  ASSERT_GT(s.pid(), 0);
  const std::string marker = unique_marker("session-killed");
  const std::string bin = vigil_bin();
  const auto env = s.env();
  const pid_t client = ::fork();
  if (client == 0) {
    if (::chdir(ws.path().c_str()) != 0) ::_exit(121);
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    ::execl(bin.c_str(), bin.c_str(), "run", "--", "sh", "-c", "echo up > ready; exec sleep 1000",
            marker.c_str(), nullptr);
    ::_exit(122);
  }
  ASSERT_TRUE(wait_for([&] { return exists(ws / "ready"); }));
  // The live sandbox's placeholder, made only where the gatekeeper is not in force.
  EXPECT_EQ(exists(ws / ".bashrc"), !kernel_has_gatekeeper());
  EXPECT_FALSE(pids_with_marker(marker).empty());

  ASSERT_EQ(::kill(s.pid(), SIGKILL), 0);
  // The client hears that its session is gone.
  const auto status = wait_child_status(client, std::chrono::seconds(30));
  ASSERT_TRUE(status) << "the client did not end within 30 s of its session's death";
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) != 0);
  EXPECT_TRUE(wait_for([&] { return pids_with_marker(marker).empty(); }));
  EXPECT_TRUE(wait_for([&] { return !exists(ws / ".bashrc"); })) << "placeholder left behind";
  const std::string dir = s.handle().substr(0, s.handle().rfind('/'));
  EXPECT_TRUE(wait_for([&] { return !exists(dir); })) << "socket directory left behind";
  // Nothing of the session runs any more: no process holds its log open.
  EXPECT_TRUE(wait_for([&] { return pids_with_marker(s.log()).empty(); }));
}

TEST(AgentSession, TheSocketRefusesAnotherUser) {
  // Another local user (tests/integration/other_user.h: vigil-ci when this pass is root,
  // vigil-ci-other when it is vigil-ci) connects with its own credentials.
  VIGIL_NEED_OTHER_USER(other);
  TempDir ws;
  ::chmod(ws.path().c_str(), 0777);
  Session s(ws.path());
  const std::string dir = s.handle().substr(0, s.handle().rfind('/'));
  struct stat st {};
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 077, 0u) << "the socket's directory is open to others";
  // While the directory is private, the other user cannot even connect.
  EXPECT_NE(act_as(other, OtherOp::kConnect, {s.handle()}).error, 0)
      << "another user connected through the session's private directory";
  // Even with the directories and the socket opened up, SO_PEERCRED turns them away.
  for (std::string d = dir; d.size() > 1 && d.rfind(s.runtime(), 0) == 0;
       d = d.substr(0, d.rfind('/'))) {
    ASSERT_EQ(::chmod(d.c_str(), 0755), 0) << d;
  }
  ASSERT_EQ(::chmod(s.handle().c_str(), 0777), 0);
  OtherResult conn = act_as(other, OtherOp::kConnect, {s.handle()});
  ASSERT_EQ(conn.error, 0) << "the other user could not connect once all was opened up: "
                           << std::strerror(conn.error);
  ASSERT_TRUE(conn.fd.valid());
  const std::string target = ws / "ran-as-other";
  wire::Request req;
  req.run.argv = {"sh", "-c", "echo > " + target};
  req.run.cwd = "/";
  (void)wire::send_frame(conn.fd.get(), wire::encode(req), {0, 1, 2});
  // The session answers a refused peer by closing: end of file, never a reply. Bounded,
  // so that a session which neither serves nor closes fails instead of hanging.
  pollfd p{conn.fd.get(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 30000), 1) << "the session neither served nor closed the connection";
  auto reply = wire::recv_frame(conn.fd.get());
  EXPECT_FALSE(reply) << "another user (uid " << other.uid << ") was served";
  EXPECT_FALSE(exists(target));
  // Opened up, the directory is no longer trusted by the session's own clients either
  // (supervisor/agent/session_socket.h): refused before anything is sent.
  auto loose = s.run({"true"});
  EXPECT_EQ(loose.exit_code, 125) << loose.err;
  EXPECT_NE(loose.err.find("open to other users"), std::string::npos) << loose.err;
  // Private again, the session still serves its own user.
  ASSERT_EQ(::chmod(dir.c_str(), 0700), 0);
  EXPECT_EQ(s.run({"true"}).exit_code, 0);
}

TEST(AgentSession, HarnessesSeeTodaysBlockOnStderr) {
  TempDir ws, outside, state;
  const std::vector<std::string> cmd = {
      "sh", "-c",
      "echo out; printf 'no newline' >&2; echo x > '" + (outside / "a") + "'; mkdir '" +
          (outside / "b") + "'; exit 4"};
  std::vector<std::string> alone = {"run", "--log", state / "alone.jsonl", "--"};
  alone.insert(alone.end(), cmd.begin(), cmd.end());
  auto standalone = run_vigil(alone, ws.path(), 60, {{"XDG_STATE_HOME", state.path()}});
  Session s(ws.path());
  auto in_session = s.run(cmd);
  EXPECT_EQ(in_session.exit_code, standalone.exit_code);
  EXPECT_EQ(in_session.exit_code, 4);
  EXPECT_EQ(in_session.out, standalone.out);
  // The same stderr, byte for byte, up to the closing line that names each one's log
  // (the session's log, the standalone run's own).
  const auto [session_text, session_where] = split_log_line(in_session.err);
  const auto [alone_text, alone_where] = split_log_line(standalone.err);
  EXPECT_EQ(session_text, alone_text);
  EXPECT_NE(in_session.err.find("<sandbox_violations>"), std::string::npos) << in_session.err;
  EXPECT_EQ(alone_where, "vigil: session log: " + (state / "alone.jsonl") + "\n");
  EXPECT_EQ(session_where.rfind("vigil: session log: /", 0), 0u) << in_session.err;
  EXPECT_EQ(session_where.back(), '\n');
}

TEST(AgentSession, RunWithoutASessionSaysHowToStartOne) {
  TempDir ws;
  auto o = run_vigil({"run", "--session", ws / "nothing.sock", "--", "true"}, ws.path());
  EXPECT_NE(o.exit_code, 0);
  EXPECT_NE(o.err.find("vigil session start"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace vigil::test

namespace vigil::test {
namespace {

TEST(AgentSession, ReplayListsTheCommandsAndShowsOneOfThem) {
  TempDir ws, outside;
  Session s(ws.path());
  ASSERT_EQ(s.run({"sh", "-c", "echo first"}).exit_code, 0);
  auto second = s.run({"sh", "-c", "echo x 2>/dev/null > '" + (outside / "blocked") + "'"});
  ASSERT_EQ(s.end().exit_code, 0);
  ASSERT_TRUE(wait_for([&] { return ::kill(s.pid(), 0) != 0; }));
  const auto block_at = second.err.find("<sandbox_violations>");
  ASSERT_NE(block_at, std::string::npos) << second.err;
  // The block, without the closing line that names the log (it follows the block).
  const auto [before_line, where] = split_log_line(second.err);
  const std::string block = before_line.substr(block_at);
  EXPECT_EQ(where.rfind("vigil: session log: ", 0), 0u) << second.err;

  auto timeline = run_vigil({"replay", s.log()}, ws.path());
  ASSERT_EQ(timeline.exit_code, 0) << timeline.err;
  const auto one = timeline.out.find("#1  exit 0  sh -c echo first");
  const auto two = timeline.out.find("#2  exit ");
  ASSERT_NE(one, std::string::npos) << timeline.out;
  ASSERT_NE(two, std::string::npos) << timeline.out;
  // The denial is listed under the second command, not the first.
  const auto deny = timeline.out.find(outside / "blocked");
  EXPECT_GT(deny, two) << timeline.out;

  // --command N: that command's records alone; its block is the one the client got.
  auto annotate = run_vigil({"replay", s.log(), "--command", "2", "--annotate"}, ws.path());
  EXPECT_EQ(annotate.exit_code, 0) << annotate.err;
  EXPECT_EQ(annotate.out, block);
  auto first = run_vigil({"replay", s.log(), "--command", "1"}, ws.path());
  EXPECT_EQ(first.exit_code, 0);
  EXPECT_EQ(first.out.find(outside / "blocked"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("command.start"), std::string::npos) << first.out;
  auto none = run_vigil({"replay", s.log(), "--command", "9"}, ws.path());
  EXPECT_NE(none.exit_code, 0);
  EXPECT_NE(none.err.find("no command 9"), std::string::npos) << none.err;
  // The HTML report lists them too.
  auto html = run_vigil({"replay", s.log(), "--html", ws / "r.html"}, ws.path());
  ASSERT_EQ(html.exit_code, 0) << html.err;
  const std::string page = read_file(ws / "r.html");
  EXPECT_NE(page.find("<section id=\"commands\">"), std::string::npos);
  EXPECT_NE(page.find("#2  exit "), std::string::npos);
}

}  // namespace
}  // namespace vigil::test

namespace vigil::test {
namespace {

TEST(AgentSession, AKilledClientTakesItsCommandWithIt) {
  TempDir ws;
  Session s(ws.path());
  const std::string marker = unique_marker("client-killed");
  const std::string bin = vigil_bin();
  const auto env = s.env();
  const pid_t client = ::fork();
  if (client == 0) {
    if (::chdir(ws.path().c_str()) != 0) ::_exit(121);
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    ::execl(bin.c_str(), bin.c_str(), "run", "--", "sh", "-c", "echo up > ready; exec sleep 1000",
            marker.c_str(), nullptr);
    ::_exit(122);
  }
  ASSERT_TRUE(wait_for([&] { return exists(ws / "ready"); }));
  ASSERT_FALSE(pids_with_marker(marker).empty());
  ASSERT_EQ(::kill(client, SIGKILL), 0);
  ASSERT_TRUE(wait_child_status(client, std::chrono::seconds(30)));
  EXPECT_TRUE(wait_for([&] { return pids_with_marker(marker).empty(); }));
  // The session lives on, and its log records how the command ended.
  EXPECT_EQ(s.run({"true"}).exit_code, 0);
  ASSERT_EQ(s.end().exit_code, 0);
  ASSERT_TRUE(wait_for([&] { return ::kill(s.pid(), 0) != 0; }));
  const std::string log = read_file(s.log());
  EXPECT_NE(log.find("\"cmd\":1,\"kind\":\"command.end\",\"signal\":9"), std::string::npos) << log;
}

}  // namespace
}  // namespace vigil::test

namespace vigil::test {
namespace {

// The socket is visible inside the sandboxes (a read-only mount does not stop a connect):
// a command asking its own session to run something in a workspace of its choosing
// would escape its writable roots. The supervisor serves no peer from another namespace.
TEST(AgentSession, ASandboxedCommandCannotUseItsSession) {
  TempDir ws, outside;
  Session s(ws.path());
  const std::string inner = "VIGIL_SESSION='" + s.handle() + "' '" + vigil_bin() +
                            "' run -- sh -c 'echo escaped > " + (outside / "x") + "'";
  auto o = s.run({"sh", "-c", "cd '" + outside.path() + "' && " + inner});
  EXPECT_NE(o.exit_code, 0) << o.err;
  EXPECT_FALSE(exists(outside / "x")) << "a sandboxed command ran one outside its sandbox";
  EXPECT_EQ(s.run({"true"}).exit_code, 0);  // the session still serves its user
}

}  // namespace
}  // namespace vigil::test
