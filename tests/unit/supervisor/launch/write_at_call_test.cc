// explain's write verdict is run's (issue 38.1): the plan's, then vigil-init's own gate
// over the mount table the plan becomes, for every row of the protected-name table.
#include "supervisor/launch/write_at_call.h"

#include <gtest/gtest.h>

#include <string>

#include "supervisor/core/policy/mandatory_denies.h"

namespace vigil {
namespace {

// A root no machine has: nothing under it exists, as for a name a call would create.
const std::string kRoot = "/nonexistent-vigil-38/w";

Policy root_policy() {
  Policy p;
  PathRule r;
  r.written = ".";
  r.literal = r.resolved = kRoot;
  r.origin = "filesystem.allowWrite[0]";
  r.kind = PathKind::kDir;
  p.fs.allow_write.push_back(r);
  return p;
}

TEST(WriteAtCallTest, MountsOfAPlanAreWhatVigilInitClassifies) {
  const Policy p = root_policy();
  const auto mounts = mounts_of_plan(build_plan(p, {}));
  ASSERT_EQ(mounts.size(), 2u);
  EXPECT_EQ(mounts[0].mount_point, "/");
  EXPECT_TRUE(mounts[0].read_only);
  EXPECT_EQ(mounts[1].mount_point, kRoot);
  EXPECT_FALSE(mounts[1].read_only);
}

TEST(WriteAtCallTest, EveryProtectedNameIsRefusedAtTheCallButTheRepositorysOwn) {
  const Policy p = root_policy();
  const Plan plan = build_plan(p, {});
  for (const MandatoryDeny& d : mandatory_denies()) {
    for (const std::string& dir : {kRoot, kRoot + "/sub/deeper"}) {
      const std::string path =
          dir + "/" + std::string(d.relpath) + (d.shape == DenyShape::kDir ? "/f" : "");
      SCOPED_TRACE(path);
      const Decision w = write_verdict(plan, p.fs, path, /*gatekeeper=*/true);
      // The names inside a .git are the git rules' (issue 39): a hook is refused in every
      // repository, a commondir straight in a .git too; the rest (config, .gitmodules: git
      // writes them) are judged on what they hold, so allowed by name.
      const bool git_rules = d.relpath.starts_with(".git/") || d.relpath == ".gitmodules";
      if (git_rules && d.relpath.starts_with(".git/hooks")) {
        EXPECT_EQ(w.verdict, Verdict::kDenied) << w.reason;
        EXPECT_NE(w.reason.find("git hook"), std::string::npos) << w.reason;
        continue;
      }
      if (git_rules && d.relpath != ".git/commondir") {
        EXPECT_EQ(w.verdict, Verdict::kAllowed) << w.reason;
        continue;
      }
      EXPECT_EQ(w.verdict, Verdict::kDenied);
      EXPECT_NE(w.reason.find("protected name " + std::string(d.relpath)), std::string::npos)
          << w.reason;
      EXPECT_EQ(w.reason.find("allowWrite"), std::string::npos) << w.reason;
      // Without the gatekeeper nothing refuses it at the call.
      EXPECT_EQ(write_verdict(plan, p.fs, path, false).verdict, Verdict::kAllowed);
    }
  }
  EXPECT_EQ(write_verdict(plan, p.fs, kRoot + "/src/main.rs", true).verdict, Verdict::kAllowed);
  EXPECT_EQ(write_verdict(plan, p.fs, "/etc/x", true).verdict, Verdict::kDenied);
}

}  // namespace
}  // namespace vigil
