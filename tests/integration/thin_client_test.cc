// `vigil run` inside a session, by both of its ways in: the fast path (exactly `run -- CMD`
// with VIGIL_SESSION set goes to the session before any CLI is built) and the full command
// line (any option: CLI11 parses it, then the same request). Both must give a harness the
// same exit status, stdout and stderr, and every refusal keeps its words.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/integration/agent_session_harness.h"
#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

TEST(ThinClient, TheFastPathAndTheFullCommandLineGiveTheSameResult) {
  TempDir ws, outside;
  const std::vector<std::string> cmd = {
      "sh", "-c", "echo out; echo err >&2; echo x > '" + (outside / "a") + "'; exit 3"};
  Session s(ws.path());
  auto fast = s.run(cmd);  // run -- CMD
  std::vector<std::string> full = {"run", "--output", "capture", "--"};
  full.insert(full.end(), cmd.begin(), cmd.end());
  auto parsed = run_vigil(full, ws.path(), 60, s.env());
  EXPECT_EQ(fast.exit_code, 3) << fast.err;
  EXPECT_EQ(parsed.exit_code, fast.exit_code);
  EXPECT_EQ(fast.out, "out\n");
  EXPECT_EQ(parsed.out, fast.out);
  // The same block, and the same closing line naming the session's log.
  EXPECT_NE(fast.err.find("<sandbox_violations>"), std::string::npos) << fast.err;
  EXPECT_EQ(fast.err.rfind("err\n", 0), 0u) << fast.err;
  EXPECT_EQ(parsed.err, fast.err);
}

TEST(ThinClient, CommandLinesOffTheFastPathKeepTheirChecksAndWarnings) {
  TempDir ws;
  Session s(ws.path());
  // Nothing after `--`: CLI11's usage error, not an empty request.
  auto empty = run_vigil({"run", "--"}, ws.path(), 30, s.env());
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_NE(empty.err.find("nothing to run"), std::string::npos) << empty.err;
  // A bad option value is refused before anything is sent.
  auto bad = run_vigil({"run", "--output", "sideways", "--", "true"}, ws.path(), 30, s.env());
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  // The session's own options are said to be ignored, and the command still runs in it.
  auto settings = run_vigil({"run", "--settings", ws / "s.json", "--", "true"}, ws.path(), 30,
                            s.env());
  EXPECT_EQ(settings.exit_code, 0) << settings.err;
  EXPECT_NE(settings.err.find("ignored here"), std::string::npos) << settings.err;
  ASSERT_EQ(s.end().exit_code, 0);
  std::size_t starts = 0;
  for (const auto& e : records(s.log())) starts += e.kind() == events::Kind::kCommandStart;
  EXPECT_EQ(starts, 1u);  // only the last one ran
}

TEST(ThinClient, ADeadSessionInTheEnvironmentIsExplained) {
  TempDir ws;
  std::map<std::string, std::string> env = {{"VIGIL_SESSION", ws / "gone/agent.sock"}};
  auto o = run_vigil({"run", "--", "true"}, ws.path(), 30, env);
  EXPECT_EQ(o.exit_code, 125) << o.err;
  EXPECT_NE(o.err.find("cannot reach the vigil session"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("vigil session start"), std::string::npos) << o.err;
  EXPECT_EQ(o.out, "");
}

}  // namespace
}  // namespace vigil::test
