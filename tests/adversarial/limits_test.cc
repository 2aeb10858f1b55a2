// Resource caps through a real `vigil run`: a command that never ends is killed at
// --timeout with everything it started, vigil says why on stderr, and session.end
// records the reason. Checked on the host: no process of it is left, and the log (sealed)
// holds "limit: timeout".
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

TEST(Limits, SleepInfinityEndsAtTheTimeout) {
  TempDir ws;
  const std::string marker = unique_marker("timeout");
  const auto t0 = std::chrono::steady_clock::now();
  // A child in the background too, and the marker on both command lines.
  auto o = run_vigil({"run", "--log", ws / "s.jsonl", "--timeout", "1", "--", "sh", "-c",
                      "sleep infinity & exec sleep infinity", marker},
                     ws.path(), 60);
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(o.exit_code, 137) << o.out << o.err;
  EXPECT_NE(o.err.find("limit: timeout"), std::string::npos) << o.err;
  EXPECT_LT(took, std::chrono::seconds(30));
  EXPECT_TRUE(pids_with_marker(marker).empty()) << "a process of the session outlived it";
  auto end = run_vigil({"replay", "--json", "session.end", ws / "s.jsonl"}, ws.path());
  EXPECT_NE(end.out.find("\"reason\":\"limit: timeout\""), std::string::npos) << end.out;
  auto v = run_vigil({"replay", "--verify", ws / "s.jsonl"}, ws.path());
  EXPECT_EQ(v.exit_code, 0) << v.out;
}

TEST(Limits, ACommandWithinItsTimeoutIsUntouched) {
  TempDir ws;
  auto o = run_vigil({"run", "--log", ws / "s.jsonl", "--timeout", "30", "--", "true"}, ws.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err.find("limit:"), std::string::npos) << o.err;
  auto end = run_vigil({"replay", "--json", "session.end", ws / "s.jsonl"}, ws.path());
  EXPECT_EQ(end.out.find("\"reason\""), std::string::npos) << end.out;
}

}  // namespace
}  // namespace vigil::test
