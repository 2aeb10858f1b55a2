// `vigil learn` never proposes a place that runs code later, nor a directory above one
// (issue 31, item 7): a table of denial sets, each with what must and must not be
// proposed. The command chooses which denial comes first, so the order varies too.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "supervisor/core/policy/code_places.h"
#include "supervisor/replay/learn_plan.h"

namespace vigil {
namespace {

events::Event denied(const std::string& path, const std::string& syscall = "openat") {
  events::FsWrite w;
  w.pid = 2;
  w.syscall = syscall;
  w.path = w.resolved = path;
  w.flags = 0101;
  w.verdict = Verdict::kDenied;
  events::Event e;
  e.body = w;
  return e;
}

struct Row {
  std::vector<std::string> denials;
  std::vector<std::string> proposed;  // exactly these entries, sorted
  std::vector<std::string> path_dirs = {};
};

std::vector<std::string> learn(const Row& r, bool reversed) {
  Policy p;
  p.home = "/home/u";
  PathRule ws;
  ws.written = ".";
  ws.literal = ws.resolved = "/home/u/proj";
  ws.origin = "filesystem.allowWrite[0]";
  ws.kind = PathKind::kDir;
  p.fs.allow_write.push_back(ws);
  const Plan plan = build_plan(p, {});
  auto m = proxy::DomainMatcher::build(p.net);
  EXPECT_TRUE(m);
  Learner l(p, plan, *m, "");
  l.set_path_dirs(r.path_dirs);
  std::vector<std::string> denials = r.denials;
  if (reversed) std::reverse(denials.begin(), denials.end());
  for (const auto& d : denials) l.take(denied(d, d.ends_with("/") ? "mkdir" : "openat"));
  std::vector<std::string> out;
  for (const auto& pr : l.result().allow_write) out.push_back(pr.entry);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(LearnCodePlacesTest, NeverProposesAPlaceThatRunsCodeOrOneAboveIt) {
  for (const Row& r : std::vector<Row>{
           // The review's own: ~/.local/lib is Python's user site-packages; ~/.local holds
           // ~/.local/bin (on PATH).
           {{"/home/u/.local/lib/x"}, {}},
           {{"/home/u/.local/lib/python3.12/site-packages/evil.pth"}, {}},
           {{"/home/u/.local/bin/ls"}, {}},
           {{"/home/u/.local/foo/x"}, {"~/.local/foo"}},
           {{"/home/u/.local/share/pnpm/store/x", "/home/u/.local/lib/x"}, {"~/.local/share/pnpm"}},
           {{"/home/u/.local/share/applications/x.desktop"}, {}},
           {{"/home/u/.local/share/systemd/user/x.service"}, {}},
           {{"/home/u/.config/systemd/user/x.service"}, {}},
           {{"/home/u/.config/autostart/x.desktop"}, {}},
           {{"/home/u/.config/environment.d/x.conf"}, {}},
           {{"/home/u/.config/Code/User/settings.json"}, {}},
           {{"/home/u/.config/Cursor/User/settings.json"}, {}},
           {{"/home/u/.config/fish/config.fish"}, {}},
           {{"/home/u/.config/nvim/init.lua"}, {}},
           {{"/home/u/.config/git/hooks/pre-commit"}, {}},
           {{"/home/u/.config/gh/hosts.yml"}, {"~/.config/gh"}},
           {{"/home/u/.vscode/extensions/x/y.js"}, {}},
           {{"/home/u/.cursor/mcp.json"}, {}},
           {{"/home/u/.claude/settings.json"}, {}},
           {{"/home/u/.codex/config.toml"}, {}},
           {{"/home/u/.bashrc.d/x.sh"}, {}},
           {{"/home/u/.profile.d/x.sh"}, {}},
           {{"/home/u/.ssh/rc"}, {}},
           {{"/home/u/bin/tool"}, {}},
           // A tool's home that holds its bin: the narrowest directory the denials need.
           {{"/home/u/.cargo/registry/cache/x.crate"}, {"~/.cargo/registry"}, {"/home/u/.cargo/bin"}},
           {{"/home/u/.cargo/registry/cache/x.crate", "/home/u/.cargo/bin/evil"},
            {"~/.cargo/registry"},
            {"/usr/bin", "/home/u/.cargo/bin"}},
           {{"/home/u/.cargo/.package-cache"}, {}, {"/home/u/.cargo/bin"}},
           {{"/home/u/.cargo/registry/cache/x.crate"}, {"~/.cargo"}},  // its bin not on PATH
           {{"/home/u/go/pkg/mod/cache/x"}, {"~/go/pkg"}, {"/home/u/go/bin"}},
           {{"/home/u/.npm/_cacache/x"}, {"~/.npm"}},
           // Directories on PATH, and above them.
           {{"/home/u/tools/bin/x"}, {}, {"/home/u/tools/bin"}},
           {{"/home/u/tools/lib/x"}, {"~/tools/lib"}, {"/home/u/tools/bin"}},
           {{"/opt/acme/bin/x"}, {}, {"/opt/acme/bin"}},
           {{"/data2/app/data/x"}, {"/data2/app/data"}, {"/data2/app/bin"}},
           {{"/data2/app/x"}, {}, {"/data2/app/bin"}},
           {{"/data2/bin/sub/x"}, {}, {"/data2/bin"}},
           // Outside $HOME never the first two levels.
           {{"/var/cache/x"}, {}},
           {{"/var/log/x"}, {}},
           {{"/var/cache/foo/bar/x"}, {"/var/cache/foo"}},
           {{"/var/spool/cron/crontabs/u"}, {}},
           // The command picks the first denial: a harmless cache file first changes nothing.
           {{"/home/u/.cache/pip/x", "/home/u/.config/systemd/user/x.service",
             "/home/u/.local/bin/x", "/home/u/.local/lib/y"},
            {"~/.cache/pip"}},
       }) {
    for (const bool reversed : {false, true}) {
      std::string trace;
      for (const auto& d : r.denials) trace += d + " ";
      SCOPED_TRACE(trace + (reversed ? "(reversed)" : ""));
      std::vector<std::string> want = r.proposed;
      std::sort(want.begin(), want.end());
      EXPECT_EQ(learn(r, reversed), want);
    }
  }
}

TEST(LearnCodePlacesTest, NarrowPastCode) {
  const auto places = code_places("/home/u", {"/home/u/.local/bin", "/usr/bin", "/"});
  auto n = narrow_past_code("/home/u/.local", "/home/u/.local/foo/bar/x", false, places, "/home/u");
  EXPECT_EQ(n.dir, "/home/u/.local/foo");
  n = narrow_past_code("/home/u/.local", "/home/u/.local/x", false, places, "/home/u");
  EXPECT_EQ(n.dir, "") << "no directory short of the file";
  EXPECT_NE(n.why.find("~/.local holds"), std::string::npos) << n.why;
  n = narrow_past_code("/home/u/.local", "/home/u/.local/newdir", true, places, "/home/u");
  EXPECT_EQ(n.dir, "/home/u/.local/newdir") << "a directory being made may be the answer";
  n = narrow_past_code("/usr", "/usr/bin/x", false, places, "/home/u");
  EXPECT_EQ(n.dir, "");
  EXPECT_EQ(path_dirs_of("/a:/b/::rel:/c/"), (std::vector<std::string>{"/a", "/b", "/c"}));
  EXPECT_EQ(path_depth("/var/cache"), 2U);
  EXPECT_EQ(path_depth("/"), 0U);
}

}  // namespace
}  // namespace vigil
