// The backstop's walk and the quarantine on a real directory tree: what existed before the
// snapshot stays, what the "session" (this test, after the snapshot) left that breaks the
// rules is found, a bounded walk says where it stopped, and the quarantine moves each item
// out with a manifest.
#include "supervisor/backstop/backstop.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <climits>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "supervisor/backstop/quarantine.h"
#include "supervisor/command/session_dir.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil {
namespace {

class Tree {
 public:
  Tree() {
    char t[] = "/tmp/vigil-backstop-XXXXXX";
    root_ = ::mkdtemp(t);
  }
  ~Tree() { (void)remove_tree(root_); }
  Tree(const Tree&) = delete;
  Tree& operator=(const Tree&) = delete;
  std::string operator/(const std::string& rel) const { return root_ + "/" + rel; }
  const std::string& root() const { return root_; }
  void dir(const std::string& rel) const { std::filesystem::create_directories(root_ + "/" + rel); }
  void file(const std::string& rel, const std::string& text) const {
    const auto slash = rel.rfind('/');
    if (slash != std::string::npos) dir(rel.substr(0, slash));
    std::ofstream(root_ + "/" + rel) << text;
  }
  // A repository git would recognise at `rel`: HEAD, objects/, refs/, a sample hook.
  void repo(const std::string& rel, const std::string& config) const {
    file(rel + "/HEAD", "ref: refs/heads/main\n");
    dir(rel + "/objects");
    dir(rel + "/refs/heads");
    file(rel + "/hooks/pre-commit.sample", "#!/bin/sh\n");
    file(rel + "/config", config);
  }

 private:
  std::string root_;
};

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// path (relative to the tree) -> rule
std::map<std::string, std::string> found(const Tree& t, const BackstopFindings& f) {
  std::map<std::string, std::string> out;
  for (const auto& o : f.offenders) {
    EXPECT_FALSE(o.reason.empty()) << o.path;
    out[o.path.substr(t.root().size() + 1)] = o.rule;
  }
  return out;
}

TEST(Backstop, FindsWhatTheSessionLeftAndNothingThatWasThere) {
  Tree t;
  // Before the session: the user's own state, some of it unsafe, all of it theirs.
  t.file("old/.vscode/settings.json", "{}");
  t.file("p/q/.bashrc", "alias ll='ls -l'\n");
  t.repo("repo/.git", "[core]\n\tbare = false\n\tpager = less\n");
  t.file("repo/.git/hooks/pre-commit", "#!/bin/sh\nlint\n");
  t.repo("safe/.git", "[core]\n\tbare = false\n");
  t.file("moved/tasks.json", "{}");
  t.repo("husky/.git", "[core]\n\tpager = less\n[filter \"lfs\"]\n\tclean = git-lfs clean\n");
  t.file("husky/.git/hooks/pre-commit", "#!/bin/sh\nnpm test\n");
  const auto snap = take_backstop_snapshot({t / "repo/.git/config"});
  wait_for_coarse_clock(snap);

  // The session.
  t.file("a/b/.vscode/tasks.json", "{}");
  t.file("old/.vscode/tasks.json", "{}");
  t.file("x/y/.bashrc", "evil\n");
  t.file("top/.mcp.json", "{}");  // a placeholder of vigil's own: skipped
  t.file("top/.bashrc", "");       // empty: runs nothing (another session's placeholder?)
  t.dir("top/.idea");
  t.file("repo/.git/config", "[core]\n\tbare = false\n\tpager = less\n[user]\n\tname = a\n");
  t.file("repo/.git/hooks/post-checkout", "#!/bin/sh\n");
  t.repo("fresh/.git", "[alias]\n\tst = !sh\n");
  t.repo("bare", "[core]\n\tbare = true\n\tfsmonitor = x\n");
  t.file("bare/hooks/pre-push", "#!/bin/sh\n");
  t.file("w/.git", "gitdir: ../bare\n");
  t.file("wt/.git", "gitdir: ../safe/.git\n");  // what git worktree add writes
  // A worktree gitdir borrowing config and hooks from the bare repository above.
  t.file("bare/worktrees/w2/HEAD", "ref: refs/heads/main\n");
  t.file("bare/worktrees/w2/commondir", "../..\n");
  t.file("w2/.git", "gitdir: ../bare/worktrees/w2\n");
  // git worktree add in a repository whose own config and hooks run the user's programs:
  // nothing new, nothing to quarantine.
  t.file("husky/.git/worktrees/hw/HEAD", "ref: refs/heads/hw\n");
  t.file("husky/.git/worktrees/hw/commondir", "../..\n");
  t.file("hw/.git", "gitdir: ../husky/.git/worktrees/hw\n");
  t.repo("safe/.git/modules/lib", "[core]\n\tworktree = ../../../lib\n");
  t.file("safe/.git/modules/lib/hooks/post-merge", "#!/bin/sh\n");
  t.dir("s");
  ASSERT_EQ(::symlink("../repo/.git", (t / "s/.git").c_str()), 0);
  t.dir("n");
  ASSERT_EQ(::rename((t / "moved").c_str(), (t / "n/.idea").c_str()), 0);
  t.file("sub/.gitmodules", "[submodule \"lib\"]\n\tpath = lib\n\turl = ../lib\n");
  t.file("evil/.gitmodules", "[submodule \"lib\"]\n\tupdate = !sh\n");
  t.repo("far/.git", "[core]\n\tworktree = ../../../../../../../../home\n");

  BackstopInputs in;
  in.roots = {t.root()};
  in.skip = {t / "top/.mcp.json"};
  in.renamed_into = {t / "n/.idea"};  // the record of the rename
  const auto f = find_offenders(in, snap);
  EXPECT_EQ(f.incomplete, "");
  const std::map<std::string, std::string> want = {
      {"a/b/.vscode", ".vscode"},
      {"old/.vscode/tasks.json", ".vscode"},
      {"x/y/.bashrc", ".bashrc"},
      {"repo/.git/hooks/post-checkout", "git-hook"},
      {"fresh/.git/config", "git-config"},
      {"bare/config", "git-config"},
      {"bare/hooks/pre-push", "git-hook"},
      {"w/.git", ".git"},
      {"w2/.git", ".git"},
      {"safe/.git/modules/lib/hooks/post-merge", "git-hook"},
      {"s/.git", ".git"},
      {"n/.idea", ".idea"},
      {"evil/.gitmodules", ".gitmodules"},
      {"far/.git/config", "git-config"},  // a checkout would write outside the roots
  };
  EXPECT_EQ(found(t, f), want);
}

// A command that breaks .git/HEAD can make git take the workspace itself for a bare
// repository: its own hooks/ and config are judged like any repository's.
TEST(Backstop, TheRootItselfMadeIntoARepository) {
  Tree t;
  t.file("src/main.c", "int main;\n");
  const auto snap = take_backstop_snapshot({});
  wait_for_coarse_clock(snap);
  t.file("HEAD", "ref: refs/heads/main\n");
  t.dir("objects");
  t.file("hooks/post-checkout", "#!/bin/sh\n");
  t.file("config", "[core]\n\tfsmonitor = x\n");
  BackstopInputs in;
  in.roots = {t.root()};
  // Without refs/ git takes it for no repository (setup.c's is_git_directory): nothing
  // of it runs. A later command that adds refs/ makes it one, and is judged then.
  EXPECT_EQ(found(t, find_offenders(in, snap)), (std::map<std::string, std::string>{}));
  t.dir("refs");
  EXPECT_EQ(found(t, find_offenders(in, snap)),
            (std::map<std::string, std::string>{{"config", "git-config"},
                                                {"hooks/post-checkout", "git-hook"}}));
}

// A commondir made in a repository's .git hands git the config and hooks of the directory
// it names. Pointing at a directory holding a hook that no walk judges as a repository
// (no HEAD) is an offender; pointing at a repository the walk judges itself (as a
// worktree's commondir does) is not: what that one holds is judged there.
TEST(Backstop, ANewCommondirPointingAtAHookIsFound) {
  Tree t;
  t.repo("a/.git", "[core]\n\tbare = false\n");
  t.repo("b/.git", "[core]\n\tbare = false\n");
  t.repo("c/.git", "[core]\n\tbare = false\n");
  const auto snap = take_backstop_snapshot({});
  wait_for_coarse_clock(snap);
  t.dir("loose/objects");
  t.file("loose/hooks/post-checkout", "#!/bin/sh\n");
  t.file("a/.git/commondir", "../../loose\n");
  t.file("b/.git/commondir", "../../c/.git\n");  // a repository with nothing new
  t.file("c/.git/commondir", ".\n");             // the repository itself
  BackstopInputs in;
  in.roots = {t.root()};
  EXPECT_EQ(found(t, find_offenders(in, snap)),
            (std::map<std::string, std::string>{{"a/.git/commondir", "git-commondir"}}));
}

TEST(Backstop, ABoundedWalkSaysWhereItStopped) {
  Tree t;
  const auto snap = take_backstop_snapshot({});
  wait_for_coarse_clock(snap);
  t.file("1/2/3/4/5/.bashrc", "evil\n");
  BackstopInputs in;
  in.roots = {t.root()};
  BackstopLimits few;
  few.max_entries = 3;
  auto f = find_offenders(in, snap, few);
  EXPECT_NE(f.incomplete.find("after 3 entries"), std::string::npos) << f.incomplete;
  // The records reach further than a bounded walk.
  in.written = {t / "1/2/3/4/5/.bashrc"};
  f = find_offenders(in, snap, few);
  EXPECT_EQ(found(t, f), (std::map<std::string, std::string>{{"1/2/3/4/5/.bashrc", ".bashrc"}}));
}

// No depth bound: a protected name 400 levels down, its path far past PATH_MAX, is found
// by the walk alone (the old walk stopped at 24 levels).
TEST(Backstop, TheWalkGoesToAnyDepth) {
  Tree t;
  const auto snap = take_backstop_snapshot({});
  wait_for_coarse_clock(snap);
  const std::string name(30, 'd');
  UniqueFd at(::open(t.root().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  std::string rel;
  for (int i = 0; i < 400; ++i) {
    ASSERT_EQ(::mkdirat(at.get(), name.c_str(), 0755), 0);
    at = UniqueFd(::openat(at.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(at);
    rel += name + "/";
  }
  UniqueFd f(::openat(at.get(), ".mcp.json", O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
  ASSERT_TRUE(f);
  ASSERT_EQ(::write(f.get(), "{}", 2), 2);
  ASSERT_GT(rel.size(), std::size_t{PATH_MAX});
  BackstopInputs in;
  in.roots = {t.root()};
  const auto found_now = find_offenders(in, snap);
  EXPECT_EQ(found_now.incomplete, "");
  EXPECT_EQ(found(t, found_now), (std::map<std::string, std::string>{{rel + ".mcp.json", ".mcp.json"}}));
}

// Repository-ness as git decides it: a HEAD symlinked into refs/ and objects/ a symlink
// make the workspace itself a repository, and its config, written before the session
// (when it meant nothing), now runs a program on the host's next `git status`.
TEST(Backstop, ARepositoryAsGitSeesItIsJudgedWholeWhenItBecomesOne) {
  Tree t;
  t.file("config", "[core]\n\tfsmonitor = touch RAN\n");
  t.dir("refs/heads");
  t.dir("store");
  t.file("staged/hooks/post-checkout", "#!/bin/sh\n");
  t.file("staged/HEAD", "ref: refs/heads/main\n");
  t.dir("staged/objects");
  t.dir("staged/refs");
  t.file("docs/commands/x.md", "run me\n");
  t.file("r/a", "");
  const auto snap = take_backstop_snapshot({});
  wait_for_coarse_clock(snap);
  ASSERT_EQ(::symlink("refs/heads/main", (t / "HEAD").c_str()), 0);
  ASSERT_EQ(::symlink("store", (t / "objects").c_str()), 0);
  // Renamed during the session: what they held, whatever its age, means what their new
  // names say.
  ASSERT_EQ(::rename((t / "staged").c_str(), (t / "r/.git").c_str()), 0);
  ASSERT_EQ(::rename((t / "docs").c_str(), (t / ".claude").c_str()), 0);
  BackstopInputs in;
  in.roots = {t.root()};
  in.renamed_into = {t / "r/.git", t / ".claude"};
  const auto f = find_offenders(in, snap);
  EXPECT_EQ(found(t, f), (std::map<std::string, std::string>{
                             {"config", "git-config"},
                             {".claude/commands", ".claude/commands"},
                             {"r/.git/hooks/post-checkout", "git-hook"},
                         }));
  // A symlink made to .claude leads the host to what vigil never judged there.
  Tree u;
  u.file("docs/commands/x.md", "run me\n");
  const auto snap2 = take_backstop_snapshot({});
  wait_for_coarse_clock(snap2);
  ASSERT_EQ(::symlink("docs", (u / ".claude").c_str()), 0);
  BackstopInputs in2;
  in2.roots = {u.root()};
  EXPECT_EQ(found(u, find_offenders(in2, snap2)),
            (std::map<std::string, std::string>{{".claude", ".claude"}}));
}

TEST(Quarantine, MovesEachItemOutUnderANumberWithAManifest) {
  Tree t, state;
  t.file("r/.git/hooks/post-checkout", "#!/bin/sh\nhook\n");
  t.file("a/.vscode/tasks.json", "{}");
  const std::string dir = state / "vigil/quarantine/20260101T000000Z-000000000000";
  const std::vector<Offender> offenders = {
      {t / "a/.vscode", ".vscode", "why a"},
      {t / "r/.git/hooks/post-checkout", "git-hook", "why b"},
      {t / "gone", ".bashrc", "why c"},
  };
  const auto moved = quarantine(offenders, dir);
  ASSERT_EQ(moved.size(), 3u);
  EXPECT_EQ(moved[0].moved_to, dir + "/1");
  EXPECT_EQ(read(dir + "/1/tasks.json"), "{}");
  EXPECT_EQ(moved[1].moved_to, dir + "/2");
  EXPECT_EQ(read(dir + "/2"), "#!/bin/sh\nhook\n");
  EXPECT_EQ(moved[2].moved_to, "");
  EXPECT_NE(moved[2].error, "");
  struct stat st {};
  EXPECT_NE(::lstat((t / "a/.vscode").c_str(), &st), 0);
  EXPECT_NE(::lstat((t / "r/.git/hooks/post-checkout").c_str(), &st), 0);
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 077, 0u) << "the quarantine is private";
  const std::string manifest = read(dir + "/manifest.jsonl");
  EXPECT_NE(manifest.find("{\"n\":1,\"path\":\"" + (t / "a/.vscode") +
                          "\",\"rule\":\".vscode\",\"reason\":\"why a\",\"moved_to\":\"" + dir +
                          "/1\"}\n"),
            std::string::npos)
      << manifest;
  EXPECT_EQ(manifest.find("gone"), std::string::npos) << "only what moved is listed";
}

TEST(Quarantine, ItsDirectoryLiesBesideTheSessionLogs) {
  auto d = quarantine_dir_for("20260101T000000Z-0123456789ab", "/s", "/h");
  ASSERT_TRUE(d);
  EXPECT_EQ(*d, "/s/vigil/quarantine/20260101T000000Z-0123456789ab");
  d = quarantine_dir_for("20260101T000000Z-0123456789ab", nullptr, "/h");
  ASSERT_TRUE(d);
  EXPECT_EQ(*d, "/h/.local/state/vigil/quarantine/20260101T000000Z-0123456789ab");
  EXPECT_FALSE(quarantine_dir_for("20260101T000000Z-0123456789ab", nullptr, nullptr));
}

}  // namespace
}  // namespace vigil
