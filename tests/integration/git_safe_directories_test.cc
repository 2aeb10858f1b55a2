// git.safeDirectories through `vigil run`: a repository whose directory another user
// owns makes git refuse ("detected dubious ownership"); listed in git.safeDirectories,
// git works in it, and the command's own GIT_CONFIG_* entries are kept beside it.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>

#include "tests/integration/harness.h"
#include "tests/integration/other_user.h"

namespace vigil::test {
namespace {

TEST(GitSafeDirectories, ARepositoryOfAnotherUserWorksOnlyWhenListed) {
  if (::access("/usr/bin/git", X_OK) != 0) GTEST_SKIP() << "git is not installed";
  VIGIL_NEED_OTHER_USER(other);
  TempDir ws, cfg;
  ASSERT_EQ(::chmod(ws.path().c_str(), 0777), 0);  // so the other user can make repo/ in it
  const OtherResult made = act_as(other, OtherOp::kMkdir, {ws / "repo"});
  ASSERT_EQ(made.error, 0) << std::strerror(made.error);
  struct stat st {};
  ASSERT_EQ(::stat((ws / "repo").c_str(), &st), 0);
  ASSERT_EQ(st.st_uid, other.uid);
  // Made outside the sandbox (inside, .git/config is a protected name): our .git in their
  // directory. git checks the owner of the work tree too.
  ASSERT_EQ(std::system(("git init -q '" + ws / "repo" + "' 2>/dev/null").c_str()), 0);
  write_file(cfg / "plain.json", R"({"filesystem": {"allowWrite": ["."]}})");
  write_file(cfg / "safe.json", R"({"filesystem": {"allowWrite": ["."]},
    "git": {"safeDirectories": ["./repo"]}})");
  // The user's own entry, which must survive beside vigil's.
  const std::map<std::string, std::string> env = {{"GIT_CONFIG_COUNT", "1"},
                                                  {"GIT_CONFIG_KEY_0", "user.name"},
                                                  {"GIT_CONFIG_VALUE_0", "Tester"}};
  const std::string script =
      "git -C repo rev-parse --git-dir; echo rc=$?; git -C repo config user.name";
  const Outcome plain = run_vigil(
      {"run", "--settings", cfg / "plain.json", "--", "sh", "-c", script}, ws.path(), 60, env);
  EXPECT_NE(plain.out.find("rc=128"), std::string::npos) << plain.out << plain.err;
  EXPECT_NE(plain.err.find("dubious ownership"), std::string::npos) << plain.err;

  const Outcome safe = run_vigil({"run", "--settings", cfg / "safe.json", "--", "sh", "-c", script},
                                 ws.path(), 60, env);
  EXPECT_EQ(safe.out, ".git\nrc=0\nTester\n") << safe.err;
  EXPECT_EQ(safe.err.find("dubious ownership"), std::string::npos) << safe.err;
  // explain names the directory and the way it is passed.
  const Outcome e = run_vigil({"explain", "--settings", cfg / "safe.json"}, ws.path());
  EXPECT_NE(e.out.find("git: safe.directory (git.safeDirectories)"), std::string::npos) << e.out;
  EXPECT_NE(e.out.find(ws.path() + "/repo"), std::string::npos) << e.out;
}

}  // namespace
}  // namespace vigil::test
