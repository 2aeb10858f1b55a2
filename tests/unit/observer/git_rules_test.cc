// The git rules at the call (observer/git_rules.h) on real directories: a hook in any
// repository's hooks, a HEAD that makes a repository of a directory whose old config runs
// a program, a directory renamed to .git, to a hooks directory or to .claude with what
// they hold: each refused; what git itself does (git init's samples, a repository's own
// HEAD rewritten by checkout) goes on.
#include "observer/git_rules.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace vigil::init {
namespace {

class Dir {
 public:
  Dir() {
    char t[] = "/tmp/vigil-gitrules-XXXXXX";
    root_ = ::mkdtemp(t);
  }
  ~Dir() { std::filesystem::remove_all(root_); }
  std::string operator/(const std::string& rel) const { return root_ + "/" + rel; }
  void dir(const std::string& rel) const { std::filesystem::create_directories(*this / rel); }
  void file(const std::string& rel, const std::string& text) const {
    std::filesystem::create_directories(std::filesystem::path(*this / rel).parent_path());
    std::ofstream(*this / rel) << text;
  }
  void repo(const std::string& rel, const std::string& config) const {
    file(rel + "/HEAD", "ref: refs/heads/main\n");
    dir(rel + "/objects");
    dir(rel + "/refs/heads");
    file(rel + "/hooks/pre-commit.sample", "#!/bin/sh\n");
    file(rel + "/config", config);
  }
  // The refusal of making `rel` (relative to the root, which stands for the writable root).
  std::string ask(const std::string& rel, const std::string& from = {},
                  Emulation call = Emulation::kOpen) const {
    return git_meaning_refusal(*this / rel, rel, from.empty() ? "" : *this / from, call);
  }

 private:
  std::string root_;
};

TEST(GitRules, AHookIsRefusedInEveryRepository) {
  Dir d;
  d.repo("bare", "[core]\n\tbare = true\n");
  d.repo(".git/modules/lib", "[core]\n\tworktree = ../../../lib\n");
  d.repo("x/.git/worktrees/w", "");
  d.dir("notrepo/hooks");
  EXPECT_NE(d.ask("bare/hooks/post-checkout"), "");
  EXPECT_NE(d.ask(".git/modules/lib/hooks/pre-commit"), "");
  EXPECT_NE(d.ask("bare/hooks/post-merge", "", Emulation::kSymlink), "");
  EXPECT_EQ(d.ask("bare/hooks/pre-push.sample"), "");
  EXPECT_EQ(d.ask("notrepo/hooks/pre-commit"), "") << "not a repository's";
  // By name alone, at any depth.
  EXPECT_NE(git_write_refusal("a/.git/hooks/post-checkout"), "");
  EXPECT_EQ(git_write_refusal("a/.git/hooks/post-checkout.sample"), "");
  EXPECT_EQ(git_write_refusal("a/.git/hooks"), "");
  EXPECT_EQ(git_write_refusal("a/.git/hooks/"), "") << "mkdir(\"a/.git/hooks/\"): git init's";
  EXPECT_EQ(d.ask("bare/hooks/"), "");
}

TEST(GitRules, ANameThatMakesARepositoryIsJudgedOnWhatIsThere) {
  Dir d;
  // Written in an earlier command, when it meant nothing.
  d.file("w/config", "[core]\n\tfsmonitor = touch RAN\n");
  d.dir("w/objects");
  d.dir("w/refs");
  EXPECT_NE(d.ask("w/HEAD"), "");
  EXPECT_NE(d.ask("w/HEAD", "", Emulation::kSymlink), "");
  d.file("v/config", "[core]\n\tbare = false\n");
  d.file("v/HEAD", "ref: refs/heads/main\n");
  d.dir("v/objects");
  d.file("v/hooks/post-checkout", "#!/bin/sh\n");
  EXPECT_NE(d.ask("v/refs"), "") << "the hook would run once refs/ is there";
  // git init: nothing there yet; a repository's HEAD rewritten (checkout): it was one.
  d.dir("fresh/objects");
  d.dir("fresh/refs");
  EXPECT_EQ(d.ask("fresh/HEAD"), "");
  d.repo("old", "[core]\n\tpager = less\n");
  EXPECT_EQ(d.ask("old/HEAD"), "") << "already a repository: its HEAD is git's to rewrite";
  EXPECT_EQ(d.ask("src/objects"), "");
}

TEST(GitRules, ARenameIsJudgedOnWhatItMoves) {
  Dir d;
  d.file("docs/commands/x.md", "run me\n");
  d.file("notes/readme.md", "hi\n");
  EXPECT_NE(d.ask("p/.claude", "docs", Emulation::kRename), "");
  EXPECT_EQ(d.ask("p/.claude", "notes", Emulation::kRename), "");
  d.file("stage/hooks/post-checkout", "#!/bin/sh\n");
  d.file("stage2/config", "[core]\n\tsshCommand = evil\n");
  d.repo("r/.git", "");
  EXPECT_NE(d.ask("q/.git", "stage", Emulation::kRename), "");
  EXPECT_NE(d.ask("q/.git", "stage2", Emulation::kRename), "");
  EXPECT_EQ(d.ask("q/.git", "notes", Emulation::kRename), "");
  d.dir("hooks2");
  d.file("hooks2/post-merge", "#!/bin/sh\n");
  EXPECT_NE(d.ask("r/.git/hooks", "hooks2", Emulation::kRename), "");
  EXPECT_NE(d.ask("s/.git", "", Emulation::kSymlink), "");
}

}  // namespace
}  // namespace vigil::init

namespace vigil::init {
namespace {

// git writes a config as config.lock, then renames it: judged on the keys it adds.
TEST(GitRules, AConfigRenamedIntoAnyRepositoryIsJudgedOnTheKeysItAdds) {
  Dir d;
  d.repo(".git/modules/lib", "[core]\n\tbare = false\n");
  d.repo("had", "[core]\n\tpager = less\n");
  d.file(".git/modules/lib/config.lock", "[core]\n\tbare = false\n\tfsmonitor = evil\n");
  d.file(".git/modules/lib/safe.lock", "[core]\n\tbare = false\n[user]\n\tname = x\n");
  d.file("had/config.lock", "[core]\n\tpager = less\n[user]\n\tname = x\n");
  d.file("plain/config.lock", "[core]\n\tfsmonitor = evil\n");
  EXPECT_NE(d.ask(".git/modules/lib/config", ".git/modules/lib/config.lock", Emulation::kRename),
            "");
  EXPECT_EQ(d.ask(".git/modules/lib/config", ".git/modules/lib/safe.lock", Emulation::kRename), "");
  EXPECT_EQ(d.ask("had/config", "had/config.lock", Emulation::kRename), "")
      << "the user's own key stays theirs";
  EXPECT_EQ(d.ask("plain/config", "plain/config.lock", Emulation::kRename), "") << "no repository";
  EXPECT_NE(d.ask("had/config.worktree", "", Emulation::kLink), "");
}

TEST(GitRules, AConfigThatIsThereIsChangedOnlyByARename) {
  Dir d;
  d.repo(".git/modules/lib", "[core]\n\tbare = false\n");
  d.file("plain/config", "x = 1\n");
  struct Row {
    Emulation call;
    bool refused;
  };
  for (const Row r : {Row{Emulation::kOpen, true}, Row{Emulation::kTruncate, true},
                      Row{Emulation::kLink, true}, Row{Emulation::kSymlink, true},
                      Row{Emulation::kChmod, false}, Row{Emulation::kUtime, false}}) {
    SCOPED_TRACE(static_cast<int>(r.call));
    EXPECT_EQ(!d.ask(".git/modules/lib/config", "", r.call).empty(), r.refused);
    EXPECT_EQ(d.ask("plain/config", "", r.call), "") << "not a git directory: any file named config";
  }
  // A directory named .git that git would not take for a repository (no HEAD): its config
  // is nothing to git until a HEAD comes, and that HEAD is judged on it.
  d.file("home/.git/config", "x = 1\n");
  EXPECT_EQ(d.ask("home/.git/config", "", Emulation::kOpen), "");
  // Any change to a live hook; git's own samples are inert.
  d.file(".git/modules/lib/hooks/pre-commit", "#!/bin/sh\n");
  for (const Emulation call : {Emulation::kOpen, Emulation::kTruncate, Emulation::kChmod, Emulation::kLink})
    EXPECT_NE(d.ask(".git/modules/lib/hooks/pre-commit", "", call), "");
  EXPECT_EQ(d.ask(".git/modules/lib/hooks/pre-commit.sample", "", Emulation::kChmod), "");
}

TEST(GitRules, OnlyConfigAndHookNamesAreJudgedOnAChange) {
  for (const char* judged : {"/w/.git/config", "/w/x/config.worktree", "/w/.git/hooks/pre-commit",
                             "/w/a.git/hooks/anything", "/w/.git/modules/m/config/"}) {
    EXPECT_TRUE(git_may_judge_change(judged)) << judged;
  }
  for (const char* not_judged : {"/w/src/main.c", "/w/.git/HEAD", "/w/configure", "/w/hooks",
                                 "/w/config.txt", "/w/.git/hooksx/pre-commit"}) {
    EXPECT_FALSE(git_may_judge_change(not_judged)) << not_judged;
  }
}

}  // namespace
}  // namespace vigil::init
