// PlanRequest::placeholders: with it off (the gatekeeper in force), no placeholder is
// planned at a missing protected name, while every existing one keeps its read-only cap.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "supervisor/launch/sandbox_plan.h"
#include "supervisor/command/session_dir.h"

namespace vigil {
namespace {

bool has_op(const Plan& plan, const std::string& path, bool exists) {
  return std::any_of(plan.ops.begin(), plan.ops.end(), [&](const PlanOp& op) {
    return op.kind == OpKind::kDenyWrite && op.path == path && op.exists == exists;
  });
}

TEST(SandboxPlanPlaceholders, OffPlansNoneAndKeepsTheCapsOfWhatExists) {
  char t[] = "/tmp/vigil-plan-XXXXXX";
  const std::string ws = ::mkdtemp(t);
  std::filesystem::create_directories(ws + "/.git/hooks");
  std::ofstream(ws + "/.git/config") << "[core]\n";
  std::ofstream(ws + "/.bashrc") << "# mine\n";
  for (const bool on : {true, false}) {
    SCOPED_TRACE(on ? "placeholders on" : "placeholders off");
    PlanRequest req;
    req.cwd = ws;
    req.placeholders = on;
    auto prepared = prepare_sandbox(req);
    ASSERT_TRUE(prepared) << prepared.error().message;
    const auto placeholders = placeholder_paths(prepared->plan);
    EXPECT_EQ(std::count(placeholders.begin(), placeholders.end(), ws + "/.mcp.json"), on ? 1 : 0);
    EXPECT_EQ(std::count(placeholders.begin(), placeholders.end(), ws + "/.vscode"), on ? 1 : 0);
    if (!on) {
      // Only the commondir inside the existing .git (no git command trips on it there).
      EXPECT_EQ(placeholders, std::vector<std::string>{ws + "/.git/commondir"});
    }
    for (const char* existing : {"/.bashrc", "/.git/hooks", "/.git/config"}) {
      EXPECT_TRUE(has_op(prepared->plan, ws + existing, true)) << existing;
    }
  }
  (void)remove_tree(ws);
}

}  // namespace
}  // namespace vigil
