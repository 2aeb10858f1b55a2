// The fix a default-denied write is told (issue 19.2): the tool's own workaround, a
// stable directory rather than the volatile file, $TMPDIR for scratch files, the
// protected startup files, and never "add" what allowWrite already lists.
#include "supervisor/report/write_hint.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vigil {
namespace {

PathRule rule(const char* written, const char* path, const char* origin, PathKind kind) {
  PathRule r;
  r.written = written;
  r.literal = r.resolved = path;
  r.origin = origin;
  r.kind = kind;
  return r;
}

Policy policy_with_home() {
  Policy p;
  p.home = "/home/u";
  p.cwd = "/home/u/proj";
  p.fs.allow_write.push_back(rule(".", "/home/u/proj", "default: working directory", PathKind::kDir));
  // The README's own example, missing on this machine: mounted as nothing.
  p.fs.allow_write.push_back(
      rule("~/.cache/pip", "/home/u/.cache/pip", "filesystem.allowWrite[1]", PathKind::kMissing));
  return p;
}

TEST(WriteHintTest, Table) {
  const Policy p = policy_with_home();
  struct Row {
    std::string path;
    std::vector<std::string> has;
    std::vector<std::string> lacks;
  };
  for (const Row& r : std::vector<Row>{
           {"/home/u/.bashrc", {"a protected startup file", "bash sources it"}, {"allowWrite"}},
           {"/home/u/.profile", {"a protected startup file"}, {"allowWrite"}},
           // A protected name at any depth: allowWrite would not help (issue 38.1).
           {"/home/u/.vscode/settings.json", {"a protected directory, .vscode"}, {"allowWrite"}},
           {"/home/u/p/.claude/commands/x.md", {"a protected directory, .claude/commands"},
            {"allowWrite"}},
           {"/home/u/p/.mcp.json", {"a protected file (agent harnesses"}, {"allowWrite"}},
           {"/home/u/.gitconfig.lock", {"allowGitConfig", "GIT_CONFIG_GLOBAL"}, {"add ~/.gitconfig"}},
           {"/home/u/.gitconfig", {"allowGitConfig"}, {}},
           {"/home/u/.npm/_cacache/tmp/30044ce5-1b2c",
            {"npm_config_cache=$TMPDIR", "add ~/.npm to filesystem.allowWrite"},
            {"_cacache", "30044ce5"}},
           {"/home/u/.npm/_logs/2026-12-01T15_00_00_000Z-debug-0.log",
            {"add ~/.npm to filesystem.allowWrite"},
            {"_logs", "debug-0"}},
           {"/home/u/.cargo/registry/cache/x.crate", {"CARGO_HOME=$TMPDIR", "add ~/.cargo"}, {"registry"}},
           {"/tmp/tmp.qZzQjNkAu2", {"use $TMPDIR"}, {"tmp.qZzQjNkAu2", "allowWrite"}},
           {"/tmp/scratch.txt", {"use $TMPDIR"}, {"allowWrite"}},
           {"/tmp/proj/sub/f", {"add /tmp/proj/sub to filesystem.allowWrite (mkdir -p"}, {"/f "}},
           {"/tmp", {"write inside the workspace or $TMPDIR"}, {"allowWrite"}},
           {"/home/u/.npm", {"npm_config_cache", "add ~/.npm to filesystem.allowWrite"}, {}},
           {"/usr/lib/junk", {"a system directory", "$TMPDIR"}, {"allowWrite"}},
           {"/etc/x", {"a system directory"}, {"allowWrite"}},
           {"/home/u/.cache/pip/http/x",
            {"lists ~/.cache/pip", "did not exist", "mkdir -p ~/.cache/pip"},
            {"add ~/.cache/pip"}},
           {"/home/u/.config/tool/state.json", {"add ~/.config/tool to filesystem.allowWrite"}, {"state.json"}},
           {"/home/u/other/x.txt", {"add ~/other to filesystem.allowWrite"}, {"x.txt"}},
           {"/home/u/notes.txt", {"a file in your home directory"}, {"add ~ "}},
           {"/srv2/data/x", {"which every program shares", "$TMPDIR"}, {"allowWrite"}},
           {"/srv2/data/app/x", {"add /srv2/data/app to filesystem.allowWrite"}, {}},
           // Places that run code later, and directories above them (issue 31): never.
           {"/home/u/.local/lib/x", {"runs code later", "site-packages"}, {"allowWrite"}},
           {"/home/u/.local/bin/tool", {"runs code later"}, {"allowWrite"}},
           {"/home/u/.local/foo/x", {"add ~/.local/foo to filesystem.allowWrite"}, {"add ~/.local "}},
           {"/home/u/.config/systemd/user/evil.service", {"runs code later", "systemd"}, {"allowWrite"}},
           {"/home/u/.config/autostart/x.desktop", {"runs code later"}, {"allowWrite"}},
           {"/home/u/.config/Code/User/settings.json", {"runs code later"}, {"allowWrite"}},
           // A protected name (.vscode) at any depth: its own hint, which names no setting either.
           {"/home/u/.vscode/extensions/x/y.js", {"no setting makes it writable"}, {"allowWrite"}},
           {"/home/u/.claude/settings.json", {"runs code later"}, {"allowWrite"}},
           {"/home/u/.cursor/mcp.json", {"runs code later"}, {"allowWrite"}},
           {"/home/u/bin/tool", {"runs code later"}, {"allowWrite"}},
           {"/var/log/x", {"which every program shares"}, {"allowWrite"}},
           {"/var/cache/x", {"which every program shares"}, {"allowWrite"}},
           {"/var/spool/cron/crontabs/u", {"runs code later", "cron"}, {"allowWrite"}},
       }) {
    SCOPED_TRACE(r.path);
    const std::string hint = default_deny_hint(r.path, p);
    for (const auto& h : r.has) EXPECT_NE(hint.find(h), std::string::npos) << hint;
    for (const auto& l : r.lacks) EXPECT_EQ(hint.find(l), std::string::npos) << hint;
  }
}

}  // namespace
}  // namespace vigil
