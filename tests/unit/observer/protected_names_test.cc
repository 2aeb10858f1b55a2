// Protected names at every depth under a writable root, judged on the real path a call
// would create (observer/protected_names.h).
#include "observer/protected_names.h"

#include <gtest/gtest.h>

namespace vigil::init {
namespace {

std::vector<Mount> sandbox() {
  return {
      {"/", "/", "ext4", "/dev/sda1", true, "8:1"},          // the host, read-only
      {"/w", "/home/u/proj", "ext4", "/dev/sda1", false, "8:1"},  // the workspace, writable
      {"/w/.bashrc", "/home/u/proj/.bashrc", "ext4", "/dev/sda1", true, "8:1"},  // an existing one
      {"/tmp", "/", "tmpfs", "tmpfs", false, "0:30"},          // a session tmpfs: ephemeral
  };
}

TEST(ProtectedNames, RefusedAtEveryDepthUnderAWritableRoot) {
  const auto m = sandbox();
  struct Case {
    const char* path;
    bool refused;
  };
  const Case cases[] = {
      {"/w/a/b/.bashrc", true},
      {"/w/a/.mcp.json", true},
      {"/w/x/.vscode", true},
      {"/w/x/.vscode/tasks.json", true},
      {"/w/deep/er/.idea/workspace.xml", true},
      {"/w/p/.claude/commands/x.md", true},
      {"/w/p/.claude/agents", true},
      {"/w/p/.claude/settings.json", false},  // .claude itself is not protected
      {"/w/s/.gitconfig", true},
      {"/w/s/.gitmodules", false},  // left to the git rules and the backstop (submodule add)
      {"/w/s/.ripgreprc", true},
      {"/w/s/.zshrc", true},
      {"/w/s/.profile", true},
      {"/w/src/main.cc", false},
      {"/w/.bashrc.d/x", false},          // not the name itself
      {"/w/x/.vscodeX", false},
      {"/w/.git/hooks/pre-commit", true},  // a hook: refused in every repository
      {"/w/.git/hooks/pre-commit.sample", false},  // git init's own
      {"/w/.git/hooks", false},                    // git init makes it
      {"/w/m/.git/hooks/x/y", true},
      {"/w/sub/.git/config", false},
      {"/w/sub/.git/commondir", true},  // git never writes one straight into a .git
      {"/w/sub/.git/worktrees/w/commondir", false},  // git worktree add's own
      {"/w/.bashrc", false},              // read-only mount: the kernel says EROFS
      {"/etc/.bashrc", false},            // read-only
      {"/tmp/.bashrc", false},            // ephemeral
      {"relative/.bashrc", false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(!protected_name_refusal(m, c.path).empty(), c.refused) << c.path;
  }
  EXPECT_NE(protected_name_refusal(m, "/w/a/.vscode").find(".vscode"), std::string::npos);
}

}  // namespace
}  // namespace vigil::init
