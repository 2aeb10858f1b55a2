// VIGIL_LOG and `vigil -v` (issue 15): a debug trace of the launch (the plan and each
// mount, bwrap's argv, each phase's time, the session log), and nothing new on stderr at
// the default level: a harness parsing vigil's stderr sees exactly what it saw before.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

bool has_line_starting(const std::string& err, const std::string& prefix) {
  for (const auto& l : lines_of(err)) {
    if (l.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

TEST(LogLevels, TheDefaultPrintsNothingOnACleanRun) {
  TempDir ws;
  const Outcome clean = run_vigil({"run", "--", "true"}, ws.path(), 60, {{"VIGIL_LOG", ""}});
  EXPECT_EQ(clean.exit_code, 0) << clean.err;
  EXPECT_EQ(clean.err, "");
  // info is the default, spelled out: the same.
  const Outcome info = run_vigil({"run", "--", "true"}, ws.path(), 60, {{"VIGIL_LOG", "info"}});
  EXPECT_EQ(info.exit_code, 0) << info.err;
  EXPECT_EQ(info.err, "");
}

void expect_launch_trace(const Outcome& o, const std::string& ws) {
  EXPECT_EQ(o.exit_code, 0) << o.err;
  for (const auto& l : lines_of(o.err)) {
    EXPECT_EQ(l.rfind("vigil: debug: ", 0), 0U) << "every line is a debug line: " << l;
  }
  EXPECT_TRUE(has_line_starting(o.err, "vigil: debug: plan: ")) << o.err;
  EXPECT_NE(o.err.find("vigil: debug: mount: writable " + ws), std::string::npos) << o.err;
  EXPECT_TRUE(has_line_starting(o.err, "vigil: debug: bwrap: ")) << o.err;
  EXPECT_TRUE(has_line_starting(o.err, "vigil: debug: bwrap: -- ")) << o.err;
  EXPECT_TRUE(has_line_starting(o.err, "vigil: debug: session log /")) << o.err;
  for (const char* phase : {"plan (policy, scan, mounts)", "scan", "spawn", "launch check",
                            "release", "command", "backstop"}) {
    EXPECT_TRUE(has_line_starting(o.err, std::string("vigil: debug: time ") + phase + ": "))
        << phase << "\n"
        << o.err;
  }
}

TEST(LogLevels, DebugTracesTheLaunch) {
  TempDir ws;
  const Outcome debug = run_vigil({"run", "--", "true"}, ws.path(), 60, {{"VIGIL_LOG", "debug"}});
  expect_launch_trace(debug, ws.path());
}

TEST(LogLevels, TheGlobalVerboseFlagTracesTheLaunchAndRunVerboseKeepsItsMeaning) {
  TempDir ws;
  const Outcome global = run_vigil({"-v", "run", "--", "true"}, ws.path(), 60, {{"VIGIL_LOG", ""}});
  expect_launch_trace(global, ws.path());
  // `vigil run -v`: as before, only the session log's place at the end, no trace.
  const Outcome run_v = run_vigil({"run", "-v", "--", "true"}, ws.path(), 60, {{"VIGIL_LOG", ""}});
  EXPECT_EQ(run_v.exit_code, 0) << run_v.err;
  const auto lines = lines_of(run_v.err);
  ASSERT_EQ(lines.size(), 1U) << run_v.err;
  EXPECT_EQ(lines[0].rfind("vigil: session log: /", 0), 0U) << run_v.err;
}

TEST(LogLevels, ABadValueWarnsNamingTheValidOnes) {
  TempDir ws;
  const Outcome bad = run_vigil({"run", "--", "true"}, ws.path(), 60, {{"VIGIL_LOG", "loud"}});
  EXPECT_EQ(bad.exit_code, 0) << bad.err;
  EXPECT_EQ(bad.err,
            "vigil: warning: VIGIL_LOG=loud is not a level: use one of trace, debug, info, "
            "warning, error, off; keeping the default, info\n");
}

TEST(LogLevels, ErrorHidesTheNoticeButNotTheBlock) {
  TempDir ws;
  const std::vector<std::string> denied = {"run", "--", "sh", "-c",
                                           "touch /etc/vigil-levels-x 2>/dev/null; true"};
  const Outcome info = run_vigil(denied, ws.path(), 60, {{"VIGIL_LOG", ""}});
  EXPECT_NE(info.err.find("</sandbox_violations>"), std::string::npos) << info.err;
  EXPECT_NE(info.err.find("vigil: session log: /"), std::string::npos) << info.err;
  const Outcome error = run_vigil(denied, ws.path(), 60, {{"VIGIL_LOG", "error"}});
  // The block is the command's stderr, for the model: never a level's to hide.
  EXPECT_NE(error.err.find("</sandbox_violations>"), std::string::npos) << error.err;
  EXPECT_EQ(error.err.find("vigil: session log:"), std::string::npos) << error.err;
}

TEST(LogLevels, TracedPathsAreEscaped) {
  TempDir base;
  const std::string ws = base / "odd\x1b]52;c;eA==\aname";
  make_dirs(ws);
  const Outcome o = run_vigil({"run", "--", "true"}, ws, 60, {{"VIGIL_LOG", "debug"}});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err.find('\x1b'), std::string::npos);
  EXPECT_EQ(o.err.find('\a'), std::string::npos);
  EXPECT_NE(o.err.find("vigil: debug: mount: writable "), std::string::npos) << o.err;
}

}  // namespace
}  // namespace vigil::test
