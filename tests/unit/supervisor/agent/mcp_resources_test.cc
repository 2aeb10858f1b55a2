// vigil mcp's resource URIs (issue 32): a fixed table; the one variable part, a command
// number, is parsed as one, so nothing else of a URI reaches replay's argv.
#include "supervisor/agent/mcp_resources.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vigil {
namespace {

using Flags = std::vector<std::string>;

TEST(McpResources, EachUriNamesOneViewWithFixedFlags) {
  const struct {
    const char* uri;
    bool raw;
    Flags flags;
  } cases[] = {
      {"vigil://session/log", true, {}},
      {"vigil://session/timeline", false, {}},
      {"vigil://session/violations", false, {"--annotate"}},
      {"vigil://session/writes", false, {"--writes"}},
      {"vigil://session/network", false, {"--net"}},
      {"vigil://session/changes", false, {"--changes"}},
      {"vigil://session/diff", false, {"--diff"}},
      {"vigil://session/commands/7/diff", false, {"--diff", "--command", "7"}},
      {"vigil://session/commands/123456789012/timeline", false, {"--command", "123456789012"}},
  };
  for (const auto& c : cases) {
    const auto r = mcp_resource_of(c.uri);
    ASSERT_TRUE(r) << c.uri;
    EXPECT_EQ(r->raw_log, c.raw) << c.uri;
    EXPECT_EQ(r->replay_flags, c.flags) << c.uri;
  }
}

TEST(McpResources, AnythingElseNamesNothing) {
  for (const char* uri :
       {"", "vigil://session/", "vigil://session/LOG", "vigil://session/log/", "vigil://other/log",
        "file:///etc/passwd", "vigil://session/html", "vigil://session/commands/0/diff",
        "vigil://session/commands/07/diff", "vigil://session/commands/-1/diff",
        "vigil://session/commands/1234567890123/diff", "vigil://session/commands/1/",
        "vigil://session/commands/1", "vigil://session/commands//diff",
        "vigil://session/commands/1/--policy", "vigil://session/commands/1;rm/diff",
        "vigil://session/commands/1/diff/x", "vigil://session/../sessions/log",
        "vigil://session/diff\n", "vigil://session/commands/1 2/diff"}) {
    EXPECT_FALSE(mcp_resource_of(uri)) << uri;
  }
}

TEST(McpResources, ListAndTemplatesNameOnlyWhatCanBeRead) {
  for (const auto& r : mcp_resource_list()) EXPECT_TRUE(mcp_resource_of(r["uri"].get<std::string>())) << r;
  for (const auto& t : mcp_resource_templates()) {
    std::string u = t["uriTemplate"];
    u.replace(u.find("{command}"), 9, "3");
    EXPECT_TRUE(mcp_resource_of(u)) << t;
  }
}

}  // namespace
}  // namespace vigil
