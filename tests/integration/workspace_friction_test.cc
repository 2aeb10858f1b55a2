// The working directory and the write-denies as an everyday session meets them (issue 19,
// items 6 and 7): a denyWrite on a file that does not exist yet leaves its parent
// creatable, a run from $HOME is warned about, and a run from a subdirectory of a
// repository is told (and, with vigil.git.writableRepository, given) what git needs.
#include <gtest/gtest.h>
#include <sys/utsname.h>

#include <string>

#include "supervisor/core/events/syscall_table.h"
#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

std::string block_of(const Outcome& o) {
  const std::size_t at = o.err.find("<sandbox_violations>\n");
  return at == std::string::npos ? std::string() : o.err.substr(at);
}

bool gatekeeper_here() {
  utsname u{};
  return ::uname(&u) == 0 && kernel_can_gatekeep(u.release);
}

int sh(const std::string& cmd) { return std::system(cmd.c_str()); }

TEST(WorkspaceFriction, DenyWriteOfAMissingFileLeavesItsParentCreatable) {
  if (!gatekeeper_here()) GTEST_SKIP() << "needs Linux 5.14+ (vigil-init performs the calls)";
  TempDir ws, cfg;
  write_file(cfg / "s.json",
             R"({"filesystem":{"allowWrite":["."],"denyWrite":["config/production.json"]}})");
  const std::string cmd =
      "mkdir config && echo d > config/dev.json && echo dev-ok; "
      "echo p > config/production.json && echo prod-written; "
      "mkdir -p stage && echo p > stage/production.json; "
      "mv config config.old && (mv stage config && echo mv-worked || echo mv-refused); "
      "(ln -s stage config && echo ln-worked || echo ln-refused); true";
  const Outcome o =
      run_vigil({"run", "--settings", cfg / "s.json", "--", "sh", "-c", cmd}, ws.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("dev-ok"), std::string::npos) << o.out << o.err;
  EXPECT_EQ(o.out.find("prod-written"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("mv-refused"), std::string::npos) << o.out << o.err;
  EXPECT_NE(o.out.find("ln-refused"), std::string::npos) << o.out << o.err;
  EXPECT_EQ(read_file(ws / "config.old/dev.json"), "d\n");
  EXPECT_FALSE(exists(ws / "config"));
  EXPECT_FALSE(exists(ws / "config.old/production.json"));
  const std::string block = block_of(o);
  EXPECT_NE(block.find("config/production.json"), std::string::npos) << o.err;
  EXPECT_NE(block.find("filesystem.denyWrite[0]"), std::string::npos) << block;
  // Nothing of vigil's stays behind in the workspace.
  EXPECT_TRUE(exists(ws / "stage/production.json"));

  // explain says what run does: no mount, refused when created.
  const Outcome e = run_vigil({"explain", "--settings", cfg / "s.json"}, ws.path());
  EXPECT_EQ(e.exit_code, 0) << e.err;
  EXPECT_EQ(e.out.find("/dev/null " + ws.path() + "/config"), std::string::npos) << e.out;
}

TEST(WorkspaceFriction, RunFromHomeWarnsAndNamesTheNarrowerSetting) {
  TempDir home;
  make_dirs(home / "project");
  const std::map<std::string, std::string> env = {{"HOME", home.path()}};
  const Outcome o = run_vigil({"run", "--", "true"}, home.path(), 60, env);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("vigil: warning: default: the working directory (" + home.path() +
                       ") holds your whole home directory"),
            std::string::npos)
      << o.err;
  EXPECT_NE(o.err.find("run from a project directory, or pass --settings"), std::string::npos)
      << o.err;
  const Outcome inside = run_vigil({"run", "--", "true"}, home / "project", 60, env);
  EXPECT_EQ(inside.exit_code, 0) << inside.err;
  EXPECT_EQ(inside.err.find("whole home directory"), std::string::npos) << inside.err;
}

TEST(WorkspaceFriction, FromARepositorysSubdirectoryGitIsToldAndGivenWhatItNeeds) {
  if (sh("command -v git >/dev/null 2>&1") != 0) GTEST_SKIP() << "git is not installed";
  TempDir ws, cfg;
  const std::string git = "git -c user.name=t -c user.email=t@t.test -c init.defaultBranch=main ";
  ASSERT_EQ(sh("cd " + ws.path() + " && " + git + "init -q && mkdir sub && echo a > sub/a && " +
               git + "add sub/a && " + git + "commit -qm one"),
            0);
  write_file(ws / ".git/hooks/pre-commit", "#!/bin/sh\nexit 0\n");
  const std::string cmd = "echo b > b && " + git + "add b && " + git +
                          "commit -qm two && echo committed; "
                          "echo 'echo pwned' >> ../.git/hooks/pre-commit || echo hook-refused; " +
                          "git config user.name model 2>/dev/null || echo config-refused; true";
  const Outcome o = run_vigil({"run", "--", "sh", "-c", cmd}, ws / "sub");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out.find("committed"), std::string::npos) << o.out;
  const std::string block = block_of(o);
  EXPECT_NE(
      block.find("the repository's .git (" + ws.path() + "/.git) lies outside the writable roots"),
      std::string::npos)
      << o.err;
  EXPECT_NE(block.find("set vigil.git.writableRepository: true"), std::string::npos) << block;

  // The hint, applied: git commits; hooks and config stay as they were.
  write_file(cfg / "s.json",
             R"({"filesystem":{"allowWrite":["."]},"vigil":{"git":{"writableRepository":true}}})");
  const std::string hook_before = read_file(ws / ".git/hooks/pre-commit");
  const std::string config_before = read_file(ws / ".git/config");
  const Outcome again =
      run_vigil({"run", "--settings", cfg / "s.json", "--", "sh", "-c", cmd}, ws / "sub");
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("committed"), std::string::npos) << again.out << again.err;
  EXPECT_NE(again.out.find("hook-refused"), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("config-refused"), std::string::npos) << again.out;
  EXPECT_EQ(read_file(ws / ".git/hooks/pre-commit"), hook_before);
  EXPECT_EQ(read_file(ws / ".git/config"), config_before);
  EXPECT_EQ(sh("cd " + ws.path() + " && git log --oneline | grep -q two"), 0);
}

TEST(WorkspaceFriction, RunFromTheRootNamesTheWorkingDirectoryNotAnotherRule) {
  // From /, everything would be writable, vigil-init too: the refusal says why (where vigil
  // was started), not a pin's rule or "install vigil elsewhere".
  const Outcome o = run_vigil({"run", "--", "true"}, "/", 120);
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("the working directory holds "), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("Run vigil from the project's directory"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("Install vigil outside"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace vigil::test
