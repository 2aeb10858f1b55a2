// What vigil-init is told to check at the call (deny globs, the read layout for
// vigil.observer.reads), what explain says of each glob, and the supervisor's own check
// of an fs.read line from the sandbox.
#include "supervisor/launch/deny_at_call.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vigil {
namespace {

using Args = std::vector<std::string>;

Plan layout() {
  Plan p;
  p.ops = {
      {OpKind::kWritable, "/ws", "default: working directory", "", true, DenyShape::kDir},
      {OpKind::kHide, "/home/u/.ssh", "filesystem.denyRead[0]", "", true, DenyShape::kDir},
      {OpKind::kReopenRead, "/home/u/.ssh/known_hosts", "filesystem.allowRead[0]", "", true,
       DenyShape::kFile},
      {OpKind::kHide, "/ws/.env", "filesystem.denyRead[1] (glob)", "", true, DenyShape::kFile},
      {OpKind::kDenyWrite, "/ws/.git/hooks", "mandatory: .git/hooks", "", true, DenyShape::kDir},
  };
  return p;
}

TEST(DenyAtCall, TheReadLayoutIsTheHiddenPathsAndWhatIsBoundBackBelowThem) {
  EXPECT_EQ(hidden_read_args(layout()),
            (Args{"--hide", "/home/u/.ssh", "filesystem.denyRead[0]", "--hide", "/ws/.env",
                  "filesystem.denyRead[1] (glob)", "--show", "/home/u/.ssh/known_hosts",
                  "filesystem.allowRead[0]"}));
  // Nothing hidden: nothing to tell, no read trapped.
  Plan none;
  none.ops = {{OpKind::kWritable, "/ws", "default: working directory", "", true, DenyShape::kDir}};
  EXPECT_TRUE(hidden_read_args(none).empty());
}

TEST(DenyAtCall, AnFsReadLineIsKeptOnlyWhenThePlanHidesItsPath) {
  struct Case {
    const char* resolved;
    bool kept;
    const char* reason;
  };
  const Case cases[] = {
      {"/home/u/.ssh/id_ed25519", true, "hidden by denyRead, filesystem.denyRead[0]"},
      {"/ws/.env", true, "hidden by denyRead, filesystem.denyRead[1] (glob)"},
      {"/home/u/.ssh/known_hosts", false, ""},  // bound back in: readable
      {"/ws/src/main.c", false, ""},
      {"/etc/passwd", false, ""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.resolved);
    events::FsRead r{7, "openat", "x", c.resolved, "whatever the sandbox said"};
    EXPECT_EQ(confirm_hidden_read(&r, layout()), c.kept);
    if (c.kept) {
      EXPECT_EQ(r.reason, c.reason);
    }
  }
}

TEST(DenyAtCall, ExplainSaysWhatTheReadsSettingTraps) {
  EXPECT_EQ(reads_explain_line(false, layout()), "");
  EXPECT_EQ(reads_explain_line(true, layout()),
            "reads (vigil.observer.reads): every open goes to vigil-init; a read of one of the 2 "
            "hidden paths is told (deny read PATH (hidden by denyRead, RULE)); stat calls are not");
  EXPECT_EQ(reads_explain_line(true, Plan{}),
            "reads (vigil.observer.reads): nothing is hidden, so no read is trapped or told");
}

FilesystemPolicy with_globs() {
  FilesystemPolicy fs;
  fs.deny_read_globs.push_back({"**/.env", "/ws/**/.env", "filesystem.denyRead[1]", 2, false});
  fs.deny_write_globs.push_back({"*.pem", "/ws/*.pem", "filesystem.denyWrite[0]", 1, true});
  return fs;
}

TEST(DenyAtCall, EveryDenyGlobIsRefusedAtTheCallWithItsOrigin) {
  // /ws does not exist here: the pattern keeps its spelling (no symlink to resolve).
  EXPECT_EQ(refuse_glob_args(with_globs()),
            (Args{"--refuse-glob", "/ws/**/.env", "filesystem.denyRead[1] \"**/.env\"",
                  "--refuse-glob", "/ws/*.pem", "filesystem.denyWrite[0] \"*.pem\""}));
  EXPECT_TRUE(refuse_glob_args(FilesystemPolicy{}).empty());
}

TEST(DenyAtCall, ExplainSaysWhichFormAppliesWhere) {
  const auto gk = glob_explain_lines(with_globs(), true);
  ASSERT_EQ(gk.size(), 2u);
  EXPECT_EQ(gk[0],
            "glob filesystem.denyRead[1] \"/ws/**/.env\": 2 existing matches hidden at launch by "
            "the mounts below (expanded at launch); a name it matches created later is refused "
            "by vigil-init at the call (refused at the call)");
  EXPECT_EQ(gk[1],
            "glob filesystem.denyWrite[0] \"/ws/*.pem\": 1 existing match read-only at launch by "
            "the mounts below (expanded at launch) (the walk hit its limit: not all); a name it "
            "matches created later is refused by vigil-init at the call (refused at the call)");
  const auto old = glob_explain_lines(with_globs(), false);
  ASSERT_EQ(old.size(), 2u);
  EXPECT_NE(old[0].find("a name created later is not covered: this kernel has no gatekeeper"),
            std::string::npos)
      << old[0];
}

}  // namespace
}  // namespace vigil
