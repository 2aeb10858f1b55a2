// Repository-ness as git decides it (supervisor/core/fs/git_dir.h), on real directories:
// each form git accepts (a symlinked HEAD or objects, a detached HEAD, a commondir) is a
// repository, each it refuses is not; and what in one runs a program, whatever its age.
#include "supervisor/core/fs/git_dir.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace vigil::git {
namespace {

class Dir {
 public:
  Dir() {
    char t[] = "/tmp/vigil-gitdir-XXXXXX";
    root_ = ::mkdtemp(t);
  }
  ~Dir() { std::filesystem::remove_all(root_); }
  std::string operator/(const std::string& rel) const { return root_ + "/" + rel; }
  void dir(const std::string& rel) const { std::filesystem::create_directories(*this / rel); }
  void file(const std::string& rel, const std::string& text) const {
    std::filesystem::create_directories(std::filesystem::path(*this / rel).parent_path());
    std::ofstream(*this / rel) << text;
  }
  void link(const std::string& target, const std::string& rel) const {
    ASSERT_EQ(::symlink(target.c_str(), (*this / rel).c_str()), 0) << rel;
  }
  UniqueFd open(const std::string& rel) const {
    return UniqueFd(::open((*this / rel).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  }

 private:
  std::string root_;
};

bool repo(const Dir& d, const std::string& rel) {
  UniqueFd fd = d.open(rel);
  return fd && is_git_directory(fd.get());
}

TEST(GitDir, RepositoryAsGitDecidesIt) {
  Dir d;
  // The plain one git init makes.
  d.file("plain/HEAD", "ref: refs/heads/main\n");
  d.dir("plain/objects");
  d.dir("plain/refs");
  // A HEAD symlink into refs/ (git's legacy form) and objects a symlink to a directory.
  d.dir("sym/refs/heads");
  d.dir("store");
  d.link("refs/heads/main", "sym/HEAD");
  d.link("../store", "sym/objects");
  // A detached HEAD, with spaces after "ref:" elsewhere.
  d.file("detached/HEAD", std::string(40, 'a') + "\n");
  d.dir("detached/objects");
  d.dir("detached/refs");
  d.file("spaced/HEAD", "ref:   refs/heads/x");
  d.dir("spaced/objects");
  d.dir("spaced/refs");
  // A worktree's gitdir: HEAD of its own, objects and refs from its commondir.
  d.file("plain/worktrees/w/HEAD", "ref: refs/heads/w\n");
  d.file("plain/worktrees/w/commondir", "../..\n");
  // Not repositories: no refs; a HEAD git refuses; a HEAD symlink out of refs/; a
  // commondir naming nothing.
  d.file("norefs/HEAD", "ref: refs/heads/main\n");
  d.dir("norefs/objects");
  d.file("badhead/HEAD", "hello\n");
  d.dir("badhead/objects");
  d.dir("badhead/refs");
  d.dir("outlink/objects");
  d.dir("outlink/refs");
  d.link("../plain/HEAD", "outlink/HEAD");
  d.file("lost/HEAD", "ref: refs/heads/main\n");
  d.file("lost/commondir", "../nowhere\n");

  for (const char* yes : {"plain", "sym", "detached", "spaced", "plain/worktrees/w"})
    EXPECT_TRUE(repo(d, yes)) << yes;
  for (const char* no : {"norefs", "badhead", "outlink", "lost", "store"})
    EXPECT_FALSE(repo(d, no)) << no;
}

TEST(GitDir, WhatWouldMakeARepositoryAndWhereADotGitPoints) {
  Dir d;
  d.file("c/config", "[core]\n\tfsmonitor = x\n");
  d.dir("c/objects");
  d.dir("c/refs");
  UniqueFd c = d.open("c");
  EXPECT_TRUE(would_be_git_directory(c.get(), "HEAD"));  // whatever HEAD will say
  EXPECT_FALSE(would_be_git_directory(c.get(), "objects"));  // no HEAD yet
  d.dir("h/objects");
  d.file("h/HEAD", "");
  UniqueFd h = d.open("h");
  EXPECT_TRUE(would_be_git_directory(h.get(), "refs"));
  EXPECT_FALSE(would_be_git_directory(h.get(), "HEAD"));  // no refs
  // .git as a gitdir file and as a symlink: both followed, as git does.
  d.file("app/.git", "gitdir: ../c\n");
  d.dir("lnk");
  d.link("../c", "lnk/.git");
  for (const char* at : {"app", "lnk"}) {
    UniqueFd p = d.open(at);
    UniqueFd g = open_dot_git(p.get());
    ASSERT_TRUE(g) << at;
    const auto found = repo_dangers(g.get());
    ASSERT_EQ(found.size(), 1u) << at;
    EXPECT_EQ(found[0].name, "config");
    EXPECT_NE(found[0].reason.find("core.fsmonitor"), std::string::npos);
  }
  d.file("plain/.git", "not a gitdir file\n");
  UniqueFd p = d.open("plain");
  EXPECT_FALSE(open_dot_git(p.get()));
}

TEST(GitDir, DangersAreHooksAndKeysWhateverTheirAge) {
  Dir d;
  d.file("r/hooks/pre-commit.sample", "#!/bin/sh\n");
  d.file("r/config", "[core]\n\tbare = false\n");
  UniqueFd r = d.open("r");
  EXPECT_TRUE(repo_dangers(r.get()).empty());
  d.file("r/hooks/post-checkout", "#!/bin/sh\n");
  d.dir("r/hooks/dir.sample");  // not a regular file: git would not run it, but not inert
  const auto found = repo_dangers(r.get());
  ASSERT_EQ(found.size(), 2u);
  for (const auto& f : found) EXPECT_EQ(f.rule, "git-hook");
  // A worktree's gitdir: its common directory's config counts.
  d.file("m/config", "[core]\n\tpager = evil\n");
  d.file("m/worktrees/w/commondir", "../..\n");
  UniqueFd w = d.open("m/worktrees/w");
  const auto common = repo_dangers(w.get());
  ASSERT_EQ(common.size(), 1u);
  EXPECT_EQ(common[0].name, "commondir: config");
  // Once the common directory is a repository, its config is its own (the user's aliases
  // do not stop `git worktree add`).
  d.file("m/HEAD", "ref: refs/heads/main\n");
  d.dir("m/objects");
  d.dir("m/refs");
  EXPECT_TRUE(repo_dangers(w.get()).empty());
}

}  // namespace
}  // namespace vigil::git
