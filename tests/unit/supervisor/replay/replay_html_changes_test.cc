// The HTML report's Changes section at the scale of an agent session (issue 38.7): grouped
// by root, the workspace first, bulk stores folded with their counts.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "supervisor/replay/replay_changes.h"

namespace vigil::replay {
namespace {

changes::PathChange change(const std::string& path, changes::Net net = changes::Net::kCreated) {
  changes::PathChange c;
  c.path = path;
  c.net = net;
  return c;
}

TEST(ReplayHtmlChangesTest, GroupsByRootWorkspaceFirstAndFoldsStores) {
  changes::ChangeSet cs;
  // Sorted by path, as the builder gives them: the caches sort before the workspace.
  for (int i = 0; i < 300; ++i)
    cs.paths.push_back(change("/home/u/.npm/_cacache/content-v2/sha512/" + std::to_string(i)));
  cs.paths.push_back(change("/home/u/.npm/_logs/debug.log"));
  for (int i = 0; i < 40; ++i)
    cs.paths.push_back(change("/home/u/proj/.git/objects/ab/" + std::to_string(i)));
  cs.paths.push_back(change("/home/u/proj/.git/index", changes::Net::kModified));
  cs.paths.push_back(change("/home/u/proj/src/main.rs", changes::Net::kModified));
  cs.paths.push_back(change("/tmp/scratch/out.txt"));
  const auto groups = group_changes(cs, "/home/u/proj");
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].root, "/home/u/proj");
  EXPECT_TRUE(groups[0].workspace);
  EXPECT_EQ(groups[0].total, 42u);
  ASSERT_EQ(groups[0].stores.size(), 1u);
  EXPECT_EQ(groups[0].stores[0].path, "/home/u/proj/.git/objects");
  EXPECT_EQ(groups[0].stores[0].paths.size(), 40u);
  ASSERT_EQ(groups[0].paths.size(), 2u);  // .git/index and src/main.rs, one by one
  EXPECT_EQ(groups[1].root, "/home/u/.npm");
  ASSERT_EQ(groups[1].stores.size(), 1u);
  EXPECT_EQ(groups[1].stores[0].path, "/home/u/.npm/_cacache");
  EXPECT_EQ(groups[1].stores[0].paths.size(), 300u);
  EXPECT_EQ(groups[1].paths.size(), 1u);
  EXPECT_EQ(groups[2].root, "/tmp/scratch");

  const std::string h = html_changes_section(
      cs,
      [](const events::FsImage&) {
        return Content{false, "", "not in the store"};
      },
      "s.jsonl", "/home/u/proj");
  const auto ws = h.find("workspace <code>/home/u/proj</code>: 42 path(s)");
  const auto npm = h.find("<code>/home/u/.npm</code>: 301 path(s)");
  ASSERT_NE(ws, std::string::npos) << h.substr(0, 2000);
  ASSERT_NE(npm, std::string::npos);
  EXPECT_LT(ws, npm) << "the workspace first";
  EXPECT_NE(h.find("<code>/home/u/.npm/_cacache</code>: 300 path(s) folded (300 created)"),
            std::string::npos);
  EXPECT_NE(h.find("<code>/home/u/proj/.git/objects</code>: 40 path(s) folded (40 created)"),
            std::string::npos);
  // A folded store lists its first names only, not a <details> per path.
  EXPECT_EQ(h.find("<code>/home/u/.npm/_cacache/content-v2/sha512/25</code>"), std::string::npos);
  EXPECT_NE(h.find("280 more: <code>vigil replay --changes s.jsonl</code>"), std::string::npos);
  EXPECT_NE(h.find("<summary><span class=\"net\">modified</span> <code>/home/u/proj/src/main.rs"),
            std::string::npos);
}

}  // namespace
}  // namespace vigil::replay
