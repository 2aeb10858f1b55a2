// The post-run backstop (supervisor/backstop/backstop.h) with the real bwrap and real git: each
// route by which a session could leave the host something that runs a program later
// (a hook, a config key, a .git file, a protected name below the top level) ends in the
// quarantine with a `quarantined` line in the block, a log record, and nothing left in
// the workspace; everyday git in the session leaves nothing to quarantine.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

bool have_git() { return std::system("git --version >/dev/null 2>&1") == 0; }

// Runs `sh -c script` on the host (outside any sandbox) in `cwd`; its exit status.
int host_sh(const std::string& cwd, const std::string& script) {
  const std::string cmd = "cd '" + cwd + "' && " + script + " >/dev/null 2>&1";
  const int st = std::system(cmd.c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

struct Session {
  Outcome o;
  std::string log;
  std::string state;  // XDG_STATE_HOME: the quarantine lies under it
};

Session run_in(const std::string& ws, const TempDir& state, const std::string& script) {
  Session s;
  s.state = state.path();
  s.log = state / "s.jsonl";
  s.o = run_vigil({"run", "--log", s.log, "--", "sh", "-c", script}, ws, 120,
                  {{"XDG_STATE_HOME", state.path()}});
  return s;
}

// The block's line for `path`, "" when there is none.
std::string quarantined_line(const Session& s, const std::string& path) {
  const std::string head = "quarantined " + path + " (";
  const auto at = s.o.err.find(head);
  if (at == std::string::npos) return {};
  return s.o.err.substr(at, s.o.err.find('\n', at) - at);
}

void expect_quarantined(const Session& s, const std::string& path, const std::string& rule) {
  const std::string line = quarantined_line(s, path);
  EXPECT_NE(line, "") << "no quarantined line for " << path << "\n" << s.o.err;
  EXPECT_NE(line.find("(" + rule + ": "), std::string::npos) << line;
  EXPECT_NE(line.find("moved to " + s.state + "/vigil/quarantine/"), std::string::npos) << line;
  struct stat st {};
  EXPECT_NE(::lstat(path.c_str(), &st), 0) << path << " is still in the workspace";
  const std::string log = read_file(s.log);
  EXPECT_NE(log.find("\"kind\":\"fs.quarantine\",\"path\":\"" + path + "\""), std::string::npos)
      << "no fs.quarantine record for " << path;
}

// The quarantined lines come before any other line of the block, and replay recomputes
// the block the model was given from the log.
// A protected name made below the top level is refused at the call (the gatekeeper:
// vigil-init answers EACCES and the block has a deny line), or, where the gatekeeper is
// not in force, quarantined after the command. Either way nothing is left on the host.
void expect_stopped(const Session& s, const std::string& path, const std::string& rule) {
  const bool refused =
      s.o.err.find("deny create " + path + " (protected name " + rule) != std::string::npos ||
      s.o.err.find("deny write " + path + " (protected name " + rule) != std::string::npos;
  if (!refused) expect_quarantined(s, path, rule);
  struct stat st {};
  EXPECT_NE(::lstat(path.c_str(), &st), 0) << path << " is on the host\n" << s.o.err;
}

// Whether the block has a deny line for `path` (any action: create, write, rename, link)
// whose reason begins with `why`.
bool denied(const Session& s, const std::string& path, const std::string& why) {
  for (std::size_t at = s.o.err.find("deny "); at != std::string::npos;
       at = s.o.err.find("deny ", at + 1)) {
    const std::string line = s.o.err.substr(at, s.o.err.find('\n', at) - at);
    if (line.find(" " + path + " (" + why) != std::string::npos) return true;
  }
  return false;
}

// A hook is refused at the call in every repository (observer/git_rules.h); where the
// gatekeeper is not in force, it is quarantined after the command.
void expect_hook_stopped(const Session& s, const std::string& path) {
  const bool refused = denied(s, path, "git hook");
  if (!refused) expect_quarantined(s, path, "git-hook");
  struct stat st {};
  EXPECT_NE(::lstat(path.c_str(), &st), 0) << path << " is on the host\n" << s.o.err;
}

void expect_block_first_and_replayed(const Session& s) {
  const auto block = s.o.err.find("<sandbox_violations>\n");
  ASSERT_NE(block, std::string::npos) << s.o.err;
  // (Where everything was refused at the call, the block has deny lines only.)
  if (s.o.err.find("\nquarantined ") != std::string::npos) {
    EXPECT_EQ(s.o.err.compare(block + 21, 12, "quarantined "), 0) << s.o.err.substr(block);
  }
  // The same state directory: the log is sealed with that user's key (log_key.h).
  const std::map<std::string, std::string> env = {{"XDG_STATE_HOME", s.state}};
  auto a = run_vigil({"replay", "--annotate", s.log}, s.state, 120, env);
  EXPECT_EQ(a.exit_code, 0) << a.err;
  // The block itself (vigil's "session log:" line follows it).
  const std::string end = "</sandbox_violations>\n";
  EXPECT_EQ(a.out, s.o.err.substr(block, s.o.err.find(end, block) + end.size() - block));
  auto v = run_vigil({"replay", "--verify", s.log}, s.state, 120, env);
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
}

TEST(Backstop, AGitFileToABareRepositoryWithFsmonitorIsQuarantined) {
  if (!have_git()) GTEST_SKIP() << "git is not installed";
  TempDir ws, state;
  const std::string marker = ws / "RAN";
  // git writes the key as store/config.lock, then renames it: refused at the call in every
  // repository (observer/git_rules.h), as is a write in place. The key written into the
  // config through an fd held across a rename is what the gate cannot see: the
  // backstop's, with the .git file that points at it.
  auto s = run_in(ws.path(), state,
                  "git init -q --bare store && { git --git-dir=store config core.fsmonitor "
                  "'touch " + marker + "; false'; } 2>/dev/null; "
                  "cp store/config store/c.tmp && exec 3>>store/c.tmp && mv store/c.tmp store/config && "
                  "printf '[core]\\n\\tfsmonitor = touch " + marker + "; false\\n' >&3; "
                  "mkdir app && printf 'gitdir: ../store\\n' > app/.git && echo done");
  EXPECT_EQ(s.o.exit_code, 0) << s.o.err;
  EXPECT_TRUE(denied(s, ws / "store/config", "git config core.fsmonitor")) << s.o.err;
  expect_quarantined(s, ws / "app/.git", ".git");
  // A config loses only the offending key (issue 31): the repository keeps the rest.
  const std::string cfg_line = quarantined_line(s, ws / "store/config");
  EXPECT_NE(cfg_line.find("(git-config: "), std::string::npos) << s.o.err;
  EXPECT_NE(cfg_line.find("core.fsmonitor"), std::string::npos) << cfg_line;
  EXPECT_NE(cfg_line.find("only these lines were taken out"), std::string::npos) << cfg_line;
  EXPECT_TRUE(exists(ws / "store/config"));
  EXPECT_EQ(read_file(ws / "store/config").find("fsmonitor"), std::string::npos);
  EXPECT_NE(read_file(ws / "store/config").find("bare = true"), std::string::npos);
  expect_block_first_and_replayed(s);
  host_sh(ws / "app", "git status");
  host_sh(ws / "store", "git status");
  EXPECT_FALSE(exists(marker)) << "git on the host ran the session's fsmonitor";
  // Restorable: the manifest names each item and where it went.
  const std::string manifest = read_file(state / ("vigil/quarantine/" +
                                                  [&] {
                                                    const std::string log = read_file(s.log);
                                                    const auto at = log.find("\"session\":\"") + 11;
                                                    return log.substr(at, log.find('"', at) - at);
                                                  }() +
                                                  "/manifest.jsonl"));
  EXPECT_NE(manifest.find("\"path\":\"" + (ws / "app/.git") + "\""), std::string::npos) << manifest;
  expect_block_first_and_replayed(s);
}

TEST(Backstop, ADirectoryRenamedIntoDotGitLosesItsHook) {
  if (!have_git()) GTEST_SKIP() << "git is not installed";
  TempDir ws, state;
  // The hook is made while r/g is no repository yet; then HEAD makes it one, and the
  // rename gives it the name git discovers. Refused at the call (HEAD, whose arrival would
  // make a repository of a directory holding a hook), or quarantined after the command.
  auto s = run_in(ws.path(), state,
                  "mkdir -p r/g/hooks r/g/objects r/g/refs/heads && "
                  "printf '#!/bin/sh\\ntouch RAN\\n' > r/g/hooks/post-checkout && "
                  "chmod +x r/g/hooks/post-checkout; echo 'ref: refs/heads/main' > r/g/HEAD; "
                  "mv r/g r/.git; echo done");
  EXPECT_EQ(s.o.exit_code, 0) << s.o.err;
  const bool refused = denied(s, ws / "r/g/HEAD", "HEAD would make");
  if (!refused) expect_quarantined(s, ws / "r/.git/hooks/post-checkout", "git-hook");
  struct stat st {};
  EXPECT_NE(::lstat((ws / "r/.git/hooks/post-checkout").c_str(), &st), 0) << s.o.err;
}

TEST(Backstop, PlainRoutesAreQuarantinedAndSamplesStay) {
  if (!have_git()) GTEST_SKIP() << "git is not installed";
  TempDir ws, state;
  ASSERT_EQ(host_sh(ws.path(), "git init -q ."), 0);  // the workspace's own repository
  auto s = run_in(ws.path(), state,
                  "git init -q sub && { printf '#!/bin/sh\\n' > sub/.git/hooks/pre-commit; } "
                  "2>/dev/null; "
                  "{ mkdir -p a/b/.vscode && echo '{}' > a/b/.vscode/tasks.json; } 2>/dev/null; "
                  "mkdir -p x/y && { echo evil > x/y/.bashrc; } 2>/dev/null; "
                  "git init -q --bare .git/modules/lib && "
                  "{ printf '#!/bin/sh\\n' > .git/modules/lib/hooks/post-checkout; } 2>/dev/null; "
                  "echo done");
  EXPECT_EQ(s.o.exit_code, 0) << s.o.err;
  EXPECT_EQ(s.o.out, "done\n");
  expect_hook_stopped(s, ws / "sub/.git/hooks/pre-commit");
  expect_stopped(s, ws / "a/b/.vscode", ".vscode");
  expect_stopped(s, ws / "x/y/.bashrc", ".bashrc");
  expect_hook_stopped(s, ws / ".git/modules/lib/hooks/post-checkout");
  EXPECT_TRUE(exists(ws / "sub/.git/hooks/pre-commit.sample")) << "stock samples are not touched";
  EXPECT_TRUE(exists(ws / "sub/.git/config")) << "a config git wrote itself is safe";
  EXPECT_TRUE(exists(ws / "a/b")) << "only the protected name goes";
  expect_block_first_and_replayed(s);
}

TEST(Backstop, EverydayGitLeavesNothingToQuarantine) {
  if (!have_git()) GTEST_SKIP() << "git is not installed";
  TempDir ws, state;
  const std::string id = "-c user.name=t -c user.email=t@t -c protocol.file.allow=always";
  auto s = run_in(
      ws.path(), state,
      "set -e; git init -q src && git -C src " + id + " commit -q --allow-empty -m s && "
      "git init -q proj && cd proj && git config user.name t && git config user.email t@t && "
      "echo a > a && git add -A && git commit -q -m a && "
      "git remote add origin ../src && git config pull.rebase false && "
      "git worktree add -q ../wt && "
      "git " + id + " submodule add -q ../src sub && git commit -q -m sub && "
      "git status --porcelain && echo done");
  EXPECT_EQ(s.o.exit_code, 0) << s.o.err;
  EXPECT_EQ(s.o.out, "done\n") << s.o.err;
  EXPECT_EQ(s.o.err.find("quarantined"), std::string::npos) << s.o.err;
  EXPECT_EQ(read_file(s.log).find("fs.quarantine"), std::string::npos);
  EXPECT_TRUE(exists(ws / "wt/.git"));
  EXPECT_TRUE(exists(ws / "proj/sub/.git"));
  EXPECT_TRUE(exists(ws / "proj/.gitmodules"));
  EXPECT_EQ(host_sh(ws / "proj", "git status"), 0);
  EXPECT_EQ(host_sh(ws / "wt", "git status"), 0);
}

// What was on the host before the session is the user's: a hook and an unsafe key that
// were already there are left alone, even in a repository the session then used.
TEST(Backstop, WhatWasThereBeforeStays) {
  if (!have_git()) GTEST_SKIP() << "git is not installed";
  TempDir ws, state;
  ASSERT_EQ(host_sh(ws.path(),
                    "mkdir -p d/e/f && git init -q d/e/f/deep && "
                    "git -C d/e/f/deep config core.pager less && "
                    "printf '#!/bin/sh\\n' > d/e/f/deep/.git/hooks/pre-commit && "
                    "mkdir -p d/e/f/g/.vscode && echo '{}' > d/e/f/g/.vscode/settings.json"),
            0);
  auto s = run_in(ws.path(), state, "echo hi > d/e/f/deep/file && echo done");
  EXPECT_EQ(s.o.exit_code, 0) << s.o.err;
  EXPECT_EQ(s.o.err.find("quarantined"), std::string::npos) << s.o.err;
  EXPECT_TRUE(exists(ws / "d/e/f/deep/.git/hooks/pre-commit"));
  EXPECT_TRUE(exists(ws / "d/e/f/g/.vscode/settings.json"));
}

}  // namespace
}  // namespace vigil::test

namespace vigil::test {
namespace {

// Where the gatekeeper refuses protected names at the call, no placeholders are bound at
// missing protected names, and everyday git in a fresh workspace behaves exactly as it
// does outside the sandbox (placeholders made `git add -A` and `git stash -u` fail,
// `git status` list names that do not exist, `git clean -fd` print "busy" lines).
TEST(Backstop, WithoutPlaceholdersGitBehavesAsOutside) {
  if (!have_git()) GTEST_SKIP() << "git is not installed";
  {
    TempDir probe;
    auto p = run_vigil({"run", "--", "sh", "-c", "test -e .mcp.json && echo placeholder; :"},
                       probe.path());
    ASSERT_EQ(p.exit_code, 0) << p.err;
    if (p.out == "placeholder\n") {
      GTEST_SKIP() << "placeholders are bound here: the gatekeeper is not in force (kernel "
                      "older than 5.14, or a build without it)";
    }
  }
  const std::string script =
      "export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 "
      "GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t "
      "GIT_AUTHOR_DATE=2020-01-01T00:00:00Z GIT_COMMITTER_DATE=2020-01-01T00:00:00Z; "
      "git init -q -b main . && echo a > a && mkdir d && echo b > d/b && git add -A; "
      "echo add=$?; git commit -q -m a; echo commit=$?; echo c > c; mkdir e; echo f > e/f; "
      "git status --porcelain; git stash -u -q; echo stash=$?; git status --porcelain; "
      "git stash pop -q; echo pop=$?; git status --porcelain --untracked-files=all; "
      "git clean -fd; echo clean=$?; git status --porcelain --ignored; ls -A";
  TempDir inside, outside, state;
  auto s = run_in(inside.path(), state, script);
  // The same script, unsandboxed, on a directory in the same (empty) state.
  const std::string out_file = state / "host.out", err_file = state / "host.err";
  ASSERT_EQ(std::system(("cd '" + outside.path() + "' && sh -c '" + script + "' >" + out_file +
                         " 2>" + err_file)
                            .c_str()),
            0);
  EXPECT_EQ(s.o.exit_code, 0);
  EXPECT_EQ(s.o.out, read_file(out_file));
  // git's own stderr is the same; vigil's block (if any) follows it, and holds no
  // quarantine: the session left nothing that breaks the rules.
  const std::string err = s.o.err.substr(0, s.o.err.find("<sandbox_violations>"));
  EXPECT_EQ(err, read_file(err_file));
  EXPECT_EQ(s.o.err.find("quarantined"), std::string::npos) << s.o.err;
  EXPECT_NE(s.o.out.find("add=0\ncommit=0\n"), std::string::npos) << s.o.out;
}

// Without placeholders, the names git keeps inside an existing repository's .git that
// were missing at launch are the command's to create; what would make git run a program
// is quarantined after the command: a new hook in a repository whose hooks/ was missing,
// and a commondir that points git at a directory holding a hook (not itself a
// repository the walk would judge: no HEAD).
TEST(Backstop, MissingNamesInAnExistingRepositoryAreQuarantined) {
  if (!have_git()) GTEST_SKIP() << "git is not installed";
  TempDir ws, state;
  ASSERT_EQ(host_sh(ws.path(), "git init -q r && rm -rf r/.git/hooks && test ! -e r/.git/commondir"),
            0);
  auto s = run_in(ws.path(), state,
                  "mkdir -p r/.git/hooks x/objects x/refs x/hooks; "
                  "{ printf '#!/bin/sh\ntouch RAN\n' > r/.git/hooks/post-checkout; } 2>/dev/null; "
                  "printf '#!/bin/sh\ntouch RAN\n' > x/hooks/post-checkout && "
                  "chmod +x x/hooks/post-checkout; "
                  "{ echo ../../x > r/.git/commondir; } 2>/dev/null; echo done");
  EXPECT_EQ(s.o.exit_code, 0) << s.o.err;
  EXPECT_EQ(s.o.out, "done\n") << s.o.err;
  expect_hook_stopped(s, ws / "r/.git/hooks/post-checkout");
  // The commondir: refused at the call (git never writes one straight into a .git), or
  // quarantined after it.
  if (!denied(s, ws / "r/.git/commondir", "protected name .git/commondir")) {
    expect_quarantined(s, ws / "r/.git/commondir", "git-commondir");
    EXPECT_NE(quarantined_line(s, ws / "r/.git/commondir").find("hooks/post-checkout"),
              std::string::npos);
  }
  struct stat st {};
  EXPECT_NE(::lstat((ws / "r/.git/commondir").c_str(), &st), 0);
  expect_block_first_and_replayed(s);
}

}  // namespace
}  // namespace vigil::test
