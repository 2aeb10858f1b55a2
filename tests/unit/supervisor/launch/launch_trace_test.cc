// The launch trace's lines (VIGIL_LOG=debug): the plan's mounts and bwrap's argv.
#include "supervisor/launch/launch_trace.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

PlanOp op(OpKind kind, std::string path, std::string origin, bool exists = true,
          bool at_call = false) {
  PlanOp o;
  o.kind = kind;
  o.path = std::move(path);
  o.origin = std::move(origin);
  o.exists = exists;
  o.at_call = at_call;
  return o;
}

TEST(LaunchTrace, PlanLinesCountAndNameEveryMount) {
  Plan plan;
  plan.ops = {op(OpKind::kWritable, "/w", "filesystem.allowWrite[0]"),
              op(OpKind::kDenyWrite, "/w/.git/hooks", "mandatory: .git/hooks"),
              op(OpKind::kDenyWrite, "/w/.env", "filesystem.denyWrite[1]", false),
              op(OpKind::kDenyWrite, "/w/.mcp.json", "mandatory: .mcp.json", false, true),
              op(OpKind::kHide, "/home/u/.ssh", "")};
  plan.notes = {"allowRead /x: nothing hidden above it"};
  const std::vector<std::string> want = {
      "plan: 5 mounts",
      "mount: writable /w (filesystem.allowWrite[0])",
      "mount: deny-write /w/.git/hooks (mandatory: .git/hooks)",
      "mount: deny-write /w/.env (filesystem.denyWrite[1]) [placeholder]",
      "mount: deny-write /w/.mcp.json (mandatory: .mcp.json) [at call, no mount]",
      "mount: hide /home/u/.ssh",
      "plan note: allowRead /x: nothing hidden above it",
  };
  EXPECT_EQ(plan_trace_lines(plan), want);
  EXPECT_EQ(plan_trace_lines(Plan{}), std::vector<std::string>{"plan: 0 mounts"});
}

TEST(LaunchTrace, BwrapLinesOnePerOptionGroupThenTheCommand) {
  const std::vector<BwrapArg> args = {
      {{"--ro-bind", "/", "/"}, ""},
      {{"--bind", "/w s", "/w s"}, "filesystem.allowWrite[0]"},
      {{"--setenv", "EMPTY", ""}, ""},
      {{"--", "/usr/bin/true"}, ""},
  };
  const std::vector<std::string> want = {
      "bwrap: /usr/bin/bwrap --args FD (3 option groups)",
      "bwrap: --ro-bind / /",
      "bwrap: --bind '/w s' '/w s' # filesystem.allowWrite[0]",
      "bwrap: --setenv EMPTY ''",
      "bwrap: -- /usr/bin/true",
  };
  EXPECT_EQ(bwrap_trace_lines("/usr/bin/bwrap", args), want);
  EXPECT_EQ(bwrap_trace_lines("/b", {}),
            std::vector<std::string>{"bwrap: /b --args FD (0 option groups)"});
}

}  // namespace
}  // namespace vigil
