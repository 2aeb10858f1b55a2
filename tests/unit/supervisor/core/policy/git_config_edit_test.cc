// Taking the offending keys out of a git config and keeping the rest (issue 31, item 9).
#include "supervisor/core/policy/git_config_edit.h"

#include <gtest/gtest.h>

#include "supervisor/core/policy/git_safety.h"

namespace vigil::git {
namespace {

constexpr const char* kConfig =
    "[core]\n"
    "\trepositoryformatversion = 0\n"
    "\thooksPath = .husky\n"
    "\tbare = false\n"
    "[remote \"origin\"]\n"
    "\turl = https://example.invalid/r.git\n"
    "\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
    "[branch \"main\"]\n"
    "\tremote = origin\n"
    "\tmerge = refs/heads/main\n"
    "[user]\n"
    "\tname = Some One\n"
    "[alias]\n"
    "\tst = !sh -c \\\n"
    "   'touch /tmp/x'\n"
    "[filter \"lfs\"]\n"
    "\tclean = git-lfs clean -- %f\n";

TEST(GitConfigEditTest, RemovesOnlyTheKeysAndKeepsTheRest) {
  const auto v = judge_config(kConfig);
  ASSERT_FALSE(v.safe);
  auto cut = remove_config_keys(kConfig, v.unsafe);
  ASSERT_TRUE(cut) << cut.error().message;
  EXPECT_TRUE(judge_config(cut->kept).safe) << cut->kept;
  for (const char* kept : {"url = https://example.invalid/r.git", "merge = refs/heads/main",
                           "name = Some One", "repositoryformatversion", "bare = false"}) {
    EXPECT_NE(cut->kept.find(kept), std::string::npos) << kept << "\n" << cut->kept;
  }
  for (const char* gone : {"hooksPath", "touch", "git-lfs"})
    EXPECT_EQ(cut->kept.find(gone), std::string::npos) << gone << "\n" << cut->kept;
  ASSERT_EQ(cut->lines.size(), 4U);  // hooksPath, the alias's two lines, the filter
  EXPECT_EQ(cut->lines[0], "\thooksPath = .husky");
  // Appending what was removed gives back every key.
  auto back = parse_config(cut->kept + cut->restore);
  auto orig = parse_config(kConfig);
  ASSERT_TRUE(back && orig);
  EXPECT_EQ(back->size(), orig->size());
  EXPECT_FALSE(judge_config(cut->kept + cut->restore).safe);
  EXPECT_NE(cut->restore.find("[core]\n\thooksPath = .husky\n"), std::string::npos) << cut->restore;
  EXPECT_NE(cut->restore.find("[filter \"lfs\"]\n"), std::string::npos) << cut->restore;
}

TEST(GitConfigEditTest, RefusesWhatItCannotDoExactly) {
  EXPECT_FALSE(remove_config_keys("[core] hooksPath = x\n[user]\nname = a\n", {"core.hookspath"}))
      << "a key on its section's line";
  EXPECT_FALSE(remove_config_keys("[core\nhooksPath = x\n", {"core.hookspath"})) << "unparsable";
  auto none = remove_config_keys("[user]\n\tname = a\n", {"core.hookspath"});
  ASSERT_TRUE(none);
  EXPECT_EQ(none->kept, "[user]\n\tname = a\n");
  EXPECT_TRUE(none->lines.empty());
}

}  // namespace
}  // namespace vigil::git
