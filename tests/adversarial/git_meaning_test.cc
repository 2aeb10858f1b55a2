// What a name comes to mean (issue 39, items 1, 2, 8 and 9): each test drives a real
// `vigil run` with a hostile command and then does on the host what a person does next
// (`git status`, `git checkout`, opening the agent): nothing the command chose may run,
// whatever order the command made its files in and however many commands it took.
// Each first shows, on a scratch directory outside any sandbox, that the same files do
// make the host's git run the program: the test would fail if vigil let them through.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>

#include "supervisor/core/base/unique_fd.h"
#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

bool have_git() { return std::system("git --version >/dev/null 2>&1") == 0; }

// `sh FILE` on the host, in `cwd`, FILE holding `script`, with no user or system git
// config in the way.
int host_sh(const std::string& cwd, const std::string& script) {
  char path[] = "/tmp/vigil-git-meaning-XXXXXX";
  const int fd = ::mkstemp(path);
  if (fd < 0) return -1;
  UniqueFd owned(fd);
  if (::write(fd, script.data(), script.size()) != static_cast<ssize_t>(script.size())) return -1;
  const std::string cmd = "cd '" + cwd + "' && GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 " +
                          "sh " + path + " >/dev/null 2>&1";
  const int st = std::system(cmd.c_str());
  ::unlink(path);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Outcome run_in(const std::string& ws, const std::string& log, const std::string& script,
               int timeout_s = 120) {
  return run_vigil({"run", "--log", log, "--", "sh", "-c", script}, ws, timeout_s);
}

// Refused at the call (a deny line) or quarantined after the command: either way the
// block says so.
bool stopped(const Outcome& o) {
  return o.err.find("deny ") != std::string::npos || o.err.find("quarantined ") != std::string::npos;
}

// The files of the attack on the workspace's root: objects/, refs/ and a config whose
// sshCommand (run by the next `git fetch`, an editor's background fetch) and fsmonitor
// touch `marker`, then a HEAD symlinked into refs/ (git accepts it) after the real .git's
// HEAD was moved aside: git on the host takes the workspace for a bare repository.
// `config_last`: the config is written after HEAD.
std::string symlinked_head_attack(const std::string& marker, bool config_last) {
  const std::string config =
      "printf \"[core]\\n\\tsshCommand = touch " + marker + "; false\\n\\tfsmonitor = touch " +
      marker + "; false\\n[remote \\\"origin\\\"]\\n\\turl = ssh://h/r\\n\" > config";
  const std::string head = "ln -s refs/heads/main HEAD";
  return "mv .git/HEAD .git/HEAD.aside; mkdir -p objects refs/heads; " +
         (config_last ? head + "; " + config : config + "; " + head) + "; echo done";
}

// What a person's tools do next on the host.
constexpr const char* kHostGit = "git status; git diff; git fetch origin";

TEST(GitMeaning, ASymlinkedHeadMakesNoRepositoryWhoseConfigRunsOnTheHost) {
  if (!have_git()) GTEST_SKIP() << "git is not installed";
  // The attack is real: on a scratch directory, the host's git runs the program.
  {
    TempDir scratch;
    const std::string marker = scratch / "RAN";
    ASSERT_EQ(host_sh(scratch.path(), "git init -q . && echo a > a"), 0);
    host_sh(scratch.path(), symlinked_head_attack(marker, false));
    host_sh(scratch.path(), kHostGit);
    ASSERT_TRUE(exists(marker)) << "host git no longer runs it: the test would prove nothing";
  }
  for (const bool config_last : {false, true}) {
    SCOPED_TRACE(config_last ? "config after HEAD" : "config before HEAD");
    TempDir ws, cfg;
    const std::string marker = cfg / "RAN";
    ASSERT_EQ(host_sh(ws.path(), "git init -q . && echo a > a"), 0);
    auto o = run_in(ws.path(), cfg / "log.jsonl", symlinked_head_attack(marker, config_last));
    EXPECT_TRUE(stopped(o)) << o.err;
    host_sh(ws.path(), kHostGit);
    EXPECT_FALSE(exists(marker)) << "git on the host ran the command's program\n" << o.err;
  }
}

// Meaning given later: each file is harmless when it is made; a later command gives it
// its meaning by a rename (or by the HEAD that makes a repository of its directory).
TEST(GitMeaning, AMeaningGivenInALaterCommandIsJudgedOnWhatIsThere) {
  if (!have_git()) GTEST_SKIP() << "git is not installed";
  TempDir ws, cfg;
  const std::string marker = cfg / "RAN";
  auto one = run_in(ws.path(), cfg / "1.jsonl",
                    "git init -q --bare b.git && "
                    "mkdir -p docs/commands && echo 'run me' > docs/commands/x.md && "
                    "mkdir stage && printf '#!/bin/sh\\ntouch " + marker + "\\n' > stage/post-checkout && "
                    "chmod +x stage/post-checkout && mkdir -p w/objects w/refs/heads && "
                    "printf '[core]\\n\\tbare = false\\n\\tworktree = .\\n\\tfsmonitor = touch " +
                        marker + "; false\\n' > w/config && echo one");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  ASSERT_EQ(one.out, "one\n") << one.err;
  auto two = run_in(ws.path(), cfg / "2.jsonl",
                    "mv docs .claude; echo mv=$?; rm -rf b.git/hooks && mv stage b.git/hooks; "
                    "echo hooks=$?; echo 'ref: refs/heads/main' > w/HEAD; echo head=$?");
  EXPECT_NE(two.out.find("mv=1"), std::string::npos) << two.out << two.err;
  EXPECT_NE(two.out.find("hooks=1"), std::string::npos) << two.out << two.err;
  EXPECT_EQ(two.out.find("head=0"), std::string::npos) << two.out << two.err;
  EXPECT_FALSE(exists(ws / "w/HEAD")) << "w is a repository on the host";
  struct stat st {};
  EXPECT_NE(::lstat((ws / ".claude/commands").c_str(), &st), 0) << ".claude/commands is on the host";
  EXPECT_NE(::lstat((ws / "b.git/hooks/post-checkout").c_str(), &st), 0) << "the hook is on the host";
  host_sh(ws / "w", "git status");
  EXPECT_FALSE(exists(marker)) << "git on the host ran the command's program\n" << two.err;
}

// Every git directory is the top .git, and a hook is refused at the call in every
// repository, new or old: no window in which a host git could run it.
TEST(GitMeaning, AHookIsRefusedAtTheCallInEveryRepository) {
  if (!have_git()) GTEST_SKIP() << "git is not installed";
  TempDir ws, cfg;
  ASSERT_EQ(host_sh(ws.path(), "git init -q . && git init -q --bare old.git"), 0);
  const std::string hook = "printf \"#!/bin/sh\\ntouch RAN\\n\" > ";
  auto o = run_in(ws.path(), cfg / "log.jsonl",
                  "git init -q new; git init -q --bare .git/modules/lib; " +
                      hook + "new/.git/hooks/pre-commit; " + hook + "old.git/hooks/post-receive; " +
                      hook + ".git/modules/lib/hooks/post-checkout; ln -s /bin/true "
                      "new/.git/hooks/post-merge; for h in new/.git/hooks/pre-commit "
                      "old.git/hooks/post-receive .git/modules/lib/hooks/post-checkout "
                      "new/.git/hooks/post-merge; do test -e $h -o -L $h && echo present $h; done; "
                      "ls new/.git/hooks | grep -c sample");
  EXPECT_EQ(o.out.find("present"), std::string::npos) << o.out << o.err;
  EXPECT_NE(o.out, "0\n") << "git init's samples are made as before";
  EXPECT_NE(o.err.find("deny write " + (ws / "new/.git/hooks/pre-commit") + " (git hook"),
            std::string::npos)
      << o.err;
}

// Post-run work has a bound: a 1 TiB sparse file the command wrote is recorded with its
// size and "not captured", never read to its end, and --timeout is kept.
TEST(GitMeaning, ATerabyteSparseFileDoesNotHoldTheRunBack) {
  TempDir ws, cfg;
  {
    UniqueFd fd(::open((ws / "big").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
    ASSERT_TRUE(fd);
    ASSERT_EQ(::ftruncate(fd.get(), off_t{1} << 40), 0);
  }
  const std::string log = cfg / "log.jsonl";
  const auto t0 = std::chrono::steady_clock::now();
  auto o = run_vigil({"run", "--timeout", "5", "--log", log, "--", "sh", "-c",
                      "printf x | dd of=big conv=notrunc bs=1 count=1 2>/dev/null; echo done"},
                     ws.path(), 60);
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "done\n");
  EXPECT_LT(took, std::chrono::seconds(15)) << "the run waited on reading the file";
  const std::string text = read_file(log);
  EXPECT_NE(text.find("\"phase\":\"post\""), std::string::npos) << "no post-image at all";
  EXPECT_NE(text.find("not captured: over"), std::string::npos);
  EXPECT_NE(text.find("\"size\":1099511627776"), std::string::npos);
}

// A config or a hook that is there already is never changed in place, nor given a second
// name to change it through: written through an open (append, truncate), truncated,
// replaced by a symlink, hard-linked, reached through a symlink, a hook made executable.
// Judged at the call in every repository (a nested one, a submodule's git directory),
// where the launch's read-only mounts do not reach. `git config` (config.lock and a
// rename) still works.
TEST(GitMeaning, AConfigOrHookThatIsThereIsNeverChangedInPlace) {
  if (!have_git()) GTEST_SKIP() << "git is not installed";
  TempDir ws, cfg, ctl;
  const std::string marker = cfg / "RAN";
  const std::string key = "printf '[core]\\n\\tfsmonitor = touch " + marker + "; false\\n' >> ";
  // The same append made directly makes the host's git run the program.
  ASSERT_EQ(host_sh(ctl.path(), "git init -q sub && " + key + "sub/.git/config && cd sub && git status"), 0);
  ASSERT_TRUE(exists(marker)) << "the control: fsmonitor did not run, so the test proves nothing";
  ASSERT_EQ(::unlink(marker.c_str()), 0);

  ASSERT_EQ(host_sh(ws.path(), "git init -q . && git init -q sub && git init -q --bare .git/modules/lib && "
                               "printf '#!/bin/sh\\ntouch " + marker + "\\n' > sub/.git/hooks/pre-commit && "
                               "chmod -x sub/.git/hooks/pre-commit"),
            0);
  const std::string before_sub = read_file(ws / "sub/.git/config");
  const std::string before_lib = read_file(ws / ".git/modules/lib/config");
  // Each in a subshell of its own: a failed redirection ends a shell.
  auto o = run_in(ws.path(), cfg / "log.jsonl",
                  "(" + key + "sub/.git/config); echo append=$?; "
                  "(" + key + ".git/modules/lib/config); echo module=$?; "
                  "(: > .git/modules/lib/config); echo trunc=$?; "
                  "truncate -s 0 .git/modules/lib/config; echo truncate=$?; "
                  "ln .git/modules/lib/config alias; echo hardlink=$?; "
                  "ln -s .git/modules/lib/config soft; (" + key + "soft); echo through=$?; "
                  "chmod +x sub/.git/hooks/pre-commit; echo chmod=$?; "
                  "(echo 'touch " + marker + "' >> sub/.git/hooks/pre-commit); echo hook=$?; "
                  "rm .git/modules/lib/config && ln -s ../../evil .git/modules/lib/config; echo symlink=$?; "
                  "git init -q fresh && git -C fresh config user.name vigil; echo gitconfig=$?");
  for (const char* refused : {"append=0", "module=0", "trunc=0", "truncate=0", "hardlink=0",
                              "through=0", "chmod=0", "hook=0", "symlink=0"}) {
    EXPECT_EQ(o.out.find(refused), std::string::npos) << refused << "\n" << o.out << o.err;
  }
  for (const char* ran : {"append=", "module=", "symlink="})
    EXPECT_NE(o.out.find(ran), std::string::npos) << ran << "\n" << o.out << o.err;
  EXPECT_NE(o.out.find("gitconfig=0"), std::string::npos) << o.out << o.err;
  EXPECT_NE(o.err.find("a git config written in place"), std::string::npos) << o.err;
  EXPECT_EQ(read_file(ws / "sub/.git/config"), before_sub);
  EXPECT_FALSE(exists(ws / "alias"));
  struct stat st {};
  ASSERT_EQ(::stat((ws / "sub/.git/hooks/pre-commit").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0111, 0u) << "the hook was made executable";
  // The module's config was removed (a removal gives no meaning), the symlink in its
  // place refused.
  EXPECT_FALSE(::lstat((ws / ".git/modules/lib/config").c_str(), &st) == 0 && S_ISLNK(st.st_mode));
  (void)before_lib;
  host_sh(ws / "sub", "git status; git -c user.name=a -c user.email=a@b commit -q --allow-empty -m x");
  host_sh(ws.path(), "GIT_DIR=.git/modules/lib git status");
  EXPECT_FALSE(exists(marker)) << "git on the host ran the command's program\n" << o.err;
}

}  // namespace
}  // namespace vigil::test
