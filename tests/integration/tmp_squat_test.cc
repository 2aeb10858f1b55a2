// Fixed names in the shared temp dir are another user's to take first: a squatted
// session base falls back to a fresh private one (with a warning naming the squatter),
// and `explain` never resolves its fixed stand-in for the session temp dir.
#include <dirent.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

// The second local user tools/test.sh creates; as root only (it takes root to plant a
// directory owned by someone else).
bool other_user(uid_t* uid) {
  const passwd* pw = ::getpwnam("vigil-ci");
  if (pw == nullptr || ::geteuid() != 0) return false;
  *uid = pw->pw_uid;
  return true;
}

std::size_t entries_starting(const std::string& dir, const std::string& prefix) {
  std::size_t n = 0;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) n += std::string(e->d_name).rfind(prefix, 0) == 0 ? 1 : 0;
    ::closedir(d);
  }
  return n;
}

TEST(TmpSquat, ASquattedSessionBaseFallsBackToAFreshOneNamingTheSquatter) {
  uid_t squatter = 0;
  if (!other_user(&squatter)) GTEST_SKIP() << "needs root and the user vigil-ci (tools/test.sh)";
  TempDir shared, ws;
  ASSERT_EQ(::chmod(shared.path().c_str(), 01777), 0);
  const std::string fixed = shared / ("vigil-" + std::to_string(::geteuid()));
  ASSERT_EQ(::mkdir(fixed.c_str(), 0777), 0);
  ASSERT_EQ(::chown(fixed.c_str(), squatter, squatter), 0);
  const std::map<std::string, std::string> env = {{"TMPDIR", shared.path()},
                                                  {"XDG_RUNTIME_DIR", ""}};
  auto o = run_vigil({"run", "--", "touch", "ran"}, ws.path(), 60, env);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(exists(ws / "ran"));
  EXPECT_NE(o.err.find("uid " + std::to_string(squatter)), std::string::npos) << o.err;
  // The fresh base served this session only.
  EXPECT_EQ(entries_starting(shared.path(), "vigil-" + std::to_string(::geteuid()) + "-"), 0u);
  // A symlink planted at the name is taken the same way, and never followed.
  ASSERT_EQ(::rmdir(fixed.c_str()), 0);
  TempDir trap;
  ASSERT_EQ(::symlink(trap.path().c_str(), fixed.c_str()), 0);
  ASSERT_EQ(::lchown(fixed.c_str(), squatter, squatter), 0);
  auto l = run_vigil({"run", "--", "true"}, ws.path(), 60, env);
  EXPECT_EQ(l.exit_code, 0) << l.err;
  EXPECT_EQ(entries_starting(trap.path(), ""), 2u) << "nothing made in the squatter's directory";
}

TEST(TmpSquat, ExplainNeverResolvesItsFixedTempName) {
  uid_t squatter = 0;
  if (!other_user(&squatter)) GTEST_SKIP() << "needs root and the user vigil-ci (tools/test.sh)";
  const std::string fixed = "/tmp/vigil-session";
  struct stat st {};
  if (::lstat(fixed.c_str(), &st) == 0) GTEST_SKIP() << fixed << " exists already";
  TempDir planted, ws;
  ASSERT_EQ(::symlink("/root", (planted / "tmp").c_str()), 0);
  ASSERT_EQ(::symlink(planted.path().c_str(), fixed.c_str()), 0);
  ASSERT_EQ(::lchown(fixed.c_str(), squatter, squatter), 0);
  auto p = run_vigil({"explain", "--path", "/root/.bashrc"}, ws.path());
  ::unlink(fixed.c_str());
  EXPECT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("write: denied"), std::string::npos)
      << "another user's symlink made /root writable: " << p.out;
}

}  // namespace
}  // namespace vigil::test
