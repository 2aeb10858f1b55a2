// srt's ignoreViolations semantics, as a table: "*" for every command, another key when
// the command line contains it, a path when the target contains it.
#include "supervisor/core/policy/ignore_violations.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

TEST(IgnoreViolationsTest, Table) {
  const std::vector<IgnoreRule> rules = {
      {"*", {"/usr/bin", "/System"}},
      {"git push", {"/usr/bin/nc", "evil.example:22"}},
      {"npm", {"/private/tmp"}},
  };
  struct Row {
    const char* command;
    const char* target;
    const char* want;
  };
  const Row rows[] = {
      {"ls", "/usr/bin/x", R"(ignoreViolations["*"]: "/usr/bin")"},
      {"ls", "/etc/passwd", ""},
      {"/bin/bash -c git push origin", "evil.example:22",
       R"(ignoreViolations["git push"]: "evil.example:22")"},
      {"git pull", "evil.example:22", ""},  // the command must contain the key
      {"npm install", "/private/tmp/x", R"(ignoreViolations["npm"]: "/private/tmp")"},
      {"pnpm install", "/private/tmp/x", R"(ignoreViolations["npm"]: "/private/tmp")"},
      {"make", "/private/tmp/x", ""},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(ignored_by(rules, r.command, r.target), r.want) << r.command << " " << r.target;
  }
  EXPECT_EQ(ignored_by({}, "ls", "/usr/bin"), "");
  EXPECT_EQ(ignore_command_line({"/bin/bash", "-c", "git push"}), "/bin/bash -c git push");
}

}  // namespace
}  // namespace vigil
