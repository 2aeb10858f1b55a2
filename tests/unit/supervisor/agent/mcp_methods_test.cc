// `vigil mcp`'s pure parts (supervisor/agent/mcp_methods.h): version negotiation, the tool
// as each version describes it, the structured result, the violations as a list.
#include "supervisor/agent/mcp_methods.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

using json = nlohmann::json;

TEST(McpVersion, AKnownVersionIsEchoedAnyOtherGetsTheLatest) {
  const struct {
    std::string asked, answered;
  } rows[] = {
      {"2025-11-25", "2025-11-25"}, {"2025-06-18", "2025-06-18"}, {"2025-03-26", "2025-03-26"},
      {"2024-11-05", "2024-11-05"}, {"1999-01-01", "2025-11-25"}, {"2099-01-01", "2025-11-25"},
      {"", "2025-11-25"},           {"2025-06-18 ", "2025-11-25"}, {"2024-10-07", "2025-11-25"},
  };
  for (const auto& r : rows) EXPECT_EQ(negotiate_mcp_version(r.asked), r.answered) << r.asked;
}

TEST(McpTool, EachVersionGetsWhatItDefines) {
  const json old = mcp_tool("2024-11-05", "/w");
  EXPECT_FALSE(old.contains("annotations"));
  EXPECT_FALSE(old.contains("outputSchema"));
  const json mid = mcp_tool("2025-03-26", "/w");
  EXPECT_EQ(mid["annotations"]["destructiveHint"], true);
  EXPECT_FALSE(mid.contains("outputSchema"));
  const json now = mcp_tool("2025-11-25", "/w");
  EXPECT_EQ(now["annotations"]["readOnlyHint"], false);
  EXPECT_EQ(now["outputSchema"]["type"], "object");
  for (const char* field : {"exit_code", "stdout", "stderr", "stdout_truncated", "stderr_truncated",
                            "violations", "log", "cancelled", "timed_out"}) {
    EXPECT_TRUE(now["outputSchema"]["properties"].contains(field)) << field;
  }
  EXPECT_EQ(now["inputSchema"]["required"], json::array({"command"}));
  EXPECT_EQ(now["inputSchema"]["properties"]["env"]["additionalProperties"]["type"], "string");
}

TEST(McpToolResult, FailedCommandsAreErrorsWithTheirFieldsAndOneBlock) {
  Ran ran;
  ran.outcome.id = 4;
  ran.outcome.exit_code = 2;
  ran.outcome.annotation = "<sandbox_violations>\ndeny write /etc/x (r)\n</sandbox_violations>\n";
  ran.outcome.violations_json =
      R"({"v":1,"quarantined":[],"unguarded":[],"denied":[{"kind":"fs","target":"/etc/x","count":1}],"ephemeral":[{"kind":"fs","target":"/h/.x"}]})";
  ran.stdout_text = "out\n";
  ran.stderr_text = "err";
  ran.combined = "out\nerr";
  ran.stderr_truncated = true;
  const json r = mcp_tool_result(ran, "2025-06-18", "/log.jsonl");
  EXPECT_EQ(r["isError"], true);
  const std::string text = r["content"][0]["text"];
  EXPECT_EQ(text.find("<sandbox_violations>"), text.rfind("<sandbox_violations>"));
  EXPECT_EQ(text.rfind("out\nerr\n", 0), 0u) << text;  // the output, then the rest
  EXPECT_LT(text.find("[output cut at"), text.find("<sandbox_violations>")) << text;
  EXPECT_NE(text.find("[exit code 2]"), std::string::npos) << text;
  EXPECT_NE(text.find("the log has it all: /log.jsonl"), std::string::npos) << text;
  const json sc = r["structuredContent"];
  EXPECT_EQ(sc["command"], 4);
  EXPECT_EQ(sc["exit_code"], 2);
  EXPECT_EQ(sc["stderr_truncated"], true);
  EXPECT_EQ(sc["stdout_truncated"], false);
  EXPECT_EQ(sc["log"], "/log.jsonl");
  ASSERT_EQ(sc["violations"].size(), 1u);  // ephemeral writes are not violations
  EXPECT_EQ(sc["violations"][0]["status"], "denied");
  EXPECT_EQ(sc["violations"][0]["target"], "/etc/x");
  Ran ok;
  EXPECT_EQ(mcp_tool_result(ok, "2025-06-18", "/l")["isError"], false);
  EXPECT_FALSE(mcp_tool_result(ok, "2025-03-26", "/l").contains("structuredContent"));
  Ran late;
  late.timed_out = true;
  late.outcome.exit_code = 137;
  EXPECT_EQ(mcp_tool_result(late, "2025-06-18", "/l")["structuredContent"]["timed_out"], true);
}

TEST(McpViolations, QuarantinedAndUnguardedComeFirstAndOddInputIsEmpty) {
  const json v = violations_list(json::parse(
      R"({"denied":[{"kind":"net"}],"unguarded":[{"kind":"fs"}],"quarantined":[{"path":"/w/.git/hooks/x"}, 5]})"));
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0]["status"], "quarantined");
  EXPECT_EQ(v[1]["status"], "unguarded");
  EXPECT_EQ(v[2]["status"], "denied");
  EXPECT_EQ(violations_list(json::array()), json::array());
  EXPECT_EQ(violations_list(json::parse(R"({"denied":"x"})")), json::array());
}

}  // namespace
}  // namespace vigil
