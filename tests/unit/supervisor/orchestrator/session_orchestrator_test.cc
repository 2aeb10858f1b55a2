// orchestrate_session(): the steps every platform's session shares, around a backend that
// stands in for bwrap or Seatbelt. A real log in a temp dir.
#include "supervisor/orchestrator/session_orchestrator.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace vigil {
namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char t[] = "/tmp/vigil-orch-XXXXXX";
    path = ::mkdtemp(t);
  }
  ~TempDir() {
    ::unlink((path + "/s.jsonl").c_str());
    ::rmdir(path.c_str());
  }
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// Opens the log as a backend does, counts, and ends as told.
class FakeBackend final : public SessionBackend {
 public:
  bool open_log = true;
  std::optional<Error> fail;  // returned before the log is opened
  int exit_code = 3;
  std::string limit;
  int runs = 0;
  SandboxedCommand seen;

  // A name the schema knows that is not Linux's: session.start must carry the backend's.
  std::string_view name() const override { return "seatbelt"; }
  Result<SandboxedOutcome> run(SandboxedCommand& cmd, CommandLogSink& sink,
                               const SessionCallbacks&) override {
    ++runs;
    seen = cmd;
    auto path = sink.log_path(prepared_);
    VIGIL_TRY(path);
    VIGIL_TRY_VOID(sink.create_now());
    if (fail) return *fail;
    if (!open_log) return SandboxedOutcome{};
    auto rec = sink.open(prepared_);
    VIGIL_TRY(rec);
    (*rec)->count("fake.ran");
    SandboxedOutcome out;
    out.exit_code = exit_code;
    out.limit = limit;
    return out;
  }

 private:
  PreparedSandbox prepared_;
};

TEST(SessionOrchestrator, RunsTheBackendAndEndsTheLog) {
  TempDir dir;
  SessionRequest req;
  req.command = {"/bin/true", "x"};
  req.cwd = dir.path;
  req.log_path = dir.path + "/s.jsonl";
  req.timeout_s = 5.0;
  FakeBackend backend;
  auto outcome = orchestrate_session(req, {}, backend);
  ASSERT_TRUE(outcome) << outcome.error().message;
  EXPECT_EQ(backend.runs, 1);
  EXPECT_EQ(outcome->exit_code, 3);
  EXPECT_EQ(outcome->log_path, dir.path + "/s.jsonl");
  EXPECT_FALSE(outcome->session_id.empty());
  // The command the backend got: the request's, with the session's id for quarantine.
  EXPECT_EQ(backend.seen.command, req.command);
  EXPECT_EQ(backend.seen.cwd, dir.path);
  EXPECT_EQ(backend.seen.quarantine_id, outcome->session_id);
  EXPECT_EQ(backend.seen.timeout_s, std::optional<double>(5.0));
  EXPECT_EQ(outcome->counters["fake.ran"], 1U);
  const std::string log = slurp(*req.log_path);
  EXPECT_NE(log.find("\"backend\":\"seatbelt\""), std::string::npos) << log;
  EXPECT_NE(log.find("\"session.start\""), std::string::npos) << log;
  EXPECT_NE(log.find("\"session.end\""), std::string::npos) << log;
  EXPECT_NE(log.find("\"exit_code\":3"), std::string::npos) << log;
}

TEST(SessionOrchestrator, RefusesBeforeTheBackendRuns) {
  FakeBackend backend;
  SessionRequest empty;
  auto none = orchestrate_session(empty, {}, backend);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, Errc::kInvalidPolicy);
  SessionRequest req;
  req.command = {"/bin/true"};
  req.cwd = "/tmp";
  ::setenv("VIGIL_SANDBOX", "1", 1);
  auto nested = orchestrate_session(req, {}, backend);
  ::unsetenv("VIGIL_SANDBOX");
  ASSERT_FALSE(nested);
  EXPECT_EQ(nested.error().code, Errc::kRefused);
  EXPECT_EQ(backend.runs, 0);
}

TEST(SessionOrchestrator, ABackendErrorLeavesNoLogBehind) {
  TempDir dir;
  SessionRequest req;
  req.command = {"/bin/true"};
  req.cwd = dir.path;
  req.log_path = dir.path + "/s.jsonl";
  FakeBackend backend;
  backend.fail = make_error(Errc::kUnsupported, "no sandbox here");
  auto outcome = orchestrate_session(req, {}, backend);
  ASSERT_FALSE(outcome);
  EXPECT_EQ(outcome.error().message, "no sandbox here");
  EXPECT_FALSE(exists(*req.log_path));
  // A backend that returns without opening the log is a bug, said as one.
  FakeBackend lazy;
  lazy.open_log = false;
  auto unopened = orchestrate_session(req, {}, lazy);
  ASSERT_FALSE(unopened);
  EXPECT_EQ(unopened.error().code, Errc::kInternal);
  EXPECT_FALSE(exists(*req.log_path));
}

}  // namespace
}  // namespace vigil
