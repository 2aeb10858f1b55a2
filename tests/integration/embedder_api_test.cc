// The embedder API (supervisor/orchestrator/session_runner.h) in-process, with the real bwrap and the
// vigil-init built beside this test binary: events arrive live and in log order, output
// comes through the callback, and the outcome carries the status and the annotation.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <string>
#include <thread>
#include <vector>

#include "supervisor/core/base/unique_fd.h"
#include "supervisor/orchestrator/session_runner.h"
#include "tests/integration/harness.h"
#include "tests/support/bounded_wait.h"

namespace vigil::test {
namespace {

TEST(EmbedderApi, RunsACommandWithLiveEventsOutputAndOutcome) {
  TempDir ws, outside, state;
  SessionRequest req;
  req.cwd = ws.path();
  req.log_path = state / "api.jsonl";
  req.command = {"/bin/sh", "-c",
                 "echo hello; echo inside > inside.txt; echo no 2>/dev/null > '" + (outside / "x") +
                     "'; echo bye >&2; exit 7"};
  std::vector<events::Event> seen;
  std::string out, err;
  SessionCallbacks cb;
  cb.on_event = [&](const events::Event& e) { seen.push_back(e); };
  cb.on_output = [&](OutputStream s, std::string_view bytes) {
    (s == OutputStream::kStdout ? out : err).append(bytes);
    return true;
  };
  auto outcome = run_session(req, cb);
  ASSERT_TRUE(outcome) << outcome.error().message;

  EXPECT_EQ(outcome->exit_code, 7);
  EXPECT_EQ(outcome->log_path, state / "api.jsonl");
  EXPECT_EQ(read_file(ws / "inside.txt"), "inside\n");
  EXPECT_FALSE(exists(outside / "x"));
  EXPECT_EQ(out, "hello\n");
  // stderr: the command's own line, then the block for the model.
  ASSERT_FALSE(outcome->annotation.empty());
  EXPECT_EQ(err, "bye\n" + outcome->annotation);
  EXPECT_NE(outcome->annotation.find(outside / "x"), std::string::npos) << outcome->annotation;
  EXPECT_NE(outcome->violations_json.find("\"denied\""), std::string::npos);

  // Every record, in seq order, from session.start to session.end, the denied write among
  // them with the kernel's verdict.
  ASSERT_GE(seen.size(), 4u);
  EXPECT_EQ(seen.front().kind(), events::Kind::kSessionStart);
  EXPECT_EQ(seen.back().kind(), events::Kind::kSessionEnd);
  bool denied = false, allowed = false;
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].seq, i) << "events out of order";
    if (const auto* w = std::get_if<events::FsWrite>(&seen[i].body)) {
      if (w->resolved == outside / "x" && w->verdict == Verdict::kDenied) denied = true;
      if (w->resolved == ws / "inside.txt" && w->verdict == Verdict::kAllowed) allowed = true;
    }
  }
  EXPECT_TRUE(denied);
  EXPECT_TRUE(allowed);
  // What the callbacks saw is what the log holds.
  size_t lines = 0;
  for (char c : read_file(outcome->log_path)) lines += c == '\n';
  EXPECT_EQ(lines, seen.size());
}

TEST(EmbedderApi, ABadPolicyIsAnErrorAndRunsNothing) {
  TempDir ws;
  write_file(ws / "bad.json", R"({"filesystem": {"denyWrites": []}})");
  SessionRequest req;
  req.cwd = ws.path();
  req.settings = "bad.json";  // relative: resolved against req.cwd, not this process's cwd
  req.log_path = ws / "never.jsonl";
  req.command = {"/bin/sh", "-c", "touch ran"};
  auto outcome = run_session(req, {});
  ASSERT_FALSE(outcome);
  EXPECT_EQ(outcome.error().code, Errc::kInvalidPolicy);
  EXPECT_NE(outcome.error().message.find("denyWrite"), std::string::npos)
      << outcome.error().message;
  EXPECT_FALSE(exists(ws / "ran"));
  EXPECT_FALSE(exists(ws / "never.jsonl"));
}

TEST(EmbedderApi, ARelativeWorkspaceIsRefused) {
  SessionRequest req;
  req.cwd = "relative/dir";
  req.command = {"/bin/true"};
  auto outcome = run_session(req, {});
  ASSERT_FALSE(outcome);
  EXPECT_EQ(outcome.error().code, Errc::kInvalidPolicy);
}

}  // namespace
}  // namespace vigil::test

namespace vigil::test {
namespace {

// An embedder that keeps SIGPIPE's default and whose stdout reader is gone (a host
// process piped into something that quit): run_session's default output forwarding gets
// EPIPE and counts it; the host is never killed by SIGPIPE. In a forked child, since the
// disposition and stdout are process-wide.
TEST(EmbedderApi, AClosedStdoutNeverCostsTheHostASigpipe) {
  TempDir ws, state;
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::signal(SIGPIPE, SIG_DFL);
    ::dup2(p[1], STDOUT_FILENO);
    UniqueFd(p[0]).reset();  // no reader left
    UniqueFd(p[1]).reset();
    SessionRequest req;
    req.cwd = ws.path();
    req.log_path = state / "s.jsonl";
    req.command = {"/bin/sh", "-c", "echo one; echo two"};
    auto outcome = run_session(req, {});
    ::_exit(outcome && outcome->counters.count("io.stdout_closed") == 1 ? 0 : 3);
  }
  UniqueFd(p[0]).reset();
  UniqueFd(p[1]).reset();
  const auto status = wait_child_status(pid, std::chrono::seconds(60));
  ASSERT_TRUE(status) << "the host did not end within 60 s";
  ASSERT_FALSE(WIFSIGNALED(*status)) << "the host was killed by signal " << WTERMSIG(*status);
  EXPECT_EQ(WEXITSTATUS(*status), 0);
}

}  // namespace
}  // namespace vigil::test

namespace vigil::test {
namespace {

// An embedder with another thread that does not block SIGCHLD: the kernel may hand the
// sandbox's SIGCHLD to that thread, which discards it (default disposition). run_session
// must still see bwrap exit (it watches a pidfd). In a forked child with an alarm, so a
// hang fails the test instead of stalling the suite.
TEST(EmbedderApi, ASigchldTakenByAnotherThreadDoesNotHangTheSession) {
  TempDir ws, state;
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::alarm(60);
    std::atomic<bool> stop{false};
    // Created before run_session blocks its signals: SIGCHLD stays open in this thread,
    // which sleeps in short naps so that it is always there to take it.
    std::thread other([&] {
      while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
    int ok = 0;
    for (int i = 0; i < 20; ++i) {
      SessionRequest req;
      req.cwd = ws.path();
      req.log_path = state / ("s" + std::to_string(i) + ".jsonl");
      req.command = {"/bin/true"};
      SessionCallbacks cb;
      cb.on_output = [](OutputStream, std::string_view) { return true; };
      auto outcome = run_session(req, cb);
      if (outcome && outcome->exit_code == 0) ++ok;
    }
    stop = true;
    other.join();
    ::_exit(ok == 20 ? 0 : 3);
  }
  const auto status = wait_child_status(pid, std::chrono::seconds(90));  // its alarm is 60 s
  ASSERT_TRUE(status) << "the host outlived its own alarm";
  ASSERT_FALSE(WIFSIGNALED(*status))
      << "killed by signal " << WTERMSIG(*status) << " (SIGALRM: a session hung waiting for bwrap)";
  EXPECT_EQ(WEXITSTATUS(*status), 0);
}

}  // namespace
}  // namespace vigil::test
