// Fixed names in the shared temp dir are another user's to take first: a squatted
// session base falls back to a fresh private one (with a warning naming the squatter),
// and `explain` never resolves its fixed stand-in for the session temp dir.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "tests/integration/harness.h"
#include "tests/integration/other_user.h"

namespace vigil::test {
namespace {

std::size_t entries_starting(const std::string& dir, const std::string& prefix) {
  std::size_t n = 0;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) n += std::string(e->d_name).rfind(prefix, 0) == 0 ? 1 : 0;
    ::closedir(d);
  }
  return n;
}

TEST(TmpSquat, ASquattedSessionBaseFallsBackToAFreshOneNamingTheSquatter) {
  VIGIL_NEED_OTHER_USER(other);
  const uid_t squatter = other.uid;
  TempDir shared, ws;
  ASSERT_EQ(::chmod(shared.path().c_str(), 01777), 0);
  const std::string fixed = shared / ("vigil-" + std::to_string(::geteuid()));
  ASSERT_EQ(act_as(other, OtherOp::kMkdir, {fixed}).error, 0);
  struct stat planted {};
  ASSERT_EQ(::lstat(fixed.c_str(), &planted), 0);
  ASSERT_EQ(planted.st_uid, squatter) << "the squatter's directory is not the squatter's";
  const std::map<std::string, std::string> env = {{"TMPDIR", shared.path()},
                                                  {"XDG_RUNTIME_DIR", ""}};
  auto o = run_vigil({"run", "--", "touch", "ran"}, ws.path(), 60, env);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(exists(ws / "ran"));
  EXPECT_NE(o.err.find("uid " + std::to_string(squatter)), std::string::npos) << o.err;
  // The fresh base served this session only.
  EXPECT_EQ(entries_starting(shared.path(), "vigil-" + std::to_string(::geteuid()) + "-"), 0u);
  // A symlink planted at the name is taken the same way, and never followed.
  ASSERT_EQ(act_as(other, OtherOp::kRmdir, {fixed}).error, 0);
  TempDir trap;
  ASSERT_EQ(::chmod(trap.path().c_str(), 0777), 0);  // the squatter's trap, open to all
  ASSERT_EQ(act_as(other, OtherOp::kSymlink, {trap.path(), fixed}).error, 0);
  auto l = run_vigil({"run", "--", "true"}, ws.path(), 60, env);
  EXPECT_EQ(l.exit_code, 0) << l.err;
  EXPECT_EQ(entries_starting(trap.path(), ""), 2u) << "nothing made in the squatter's directory";
}

TEST(TmpSquat, ExplainNeverResolvesItsFixedTempName) {
  VIGIL_NEED_OTHER_USER(other);
  const std::string fixed = "/tmp/vigil-session";
  struct stat st {};
  if (::lstat(fixed.c_str(), &st) == 0) GTEST_SKIP() << fixed << " exists already";
  TempDir planted, ws;
  ASSERT_EQ(::symlink("/root", (planted / "tmp").c_str()), 0);
  ASSERT_EQ(::chmod(planted.path().c_str(), 0755), 0);
  ASSERT_EQ(act_as(other, OtherOp::kSymlink, {planted.path(), fixed}).error, 0);
  ASSERT_EQ(::lstat(fixed.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, other.uid);
  auto p = run_vigil({"explain", "--path", "/root/.bashrc"}, ws.path());
  // /tmp is sticky: only its owner removes the name.
  EXPECT_EQ(act_as(other, OtherOp::kUnlink, {fixed}).error, 0) << "left behind: " << fixed;
  EXPECT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("write: denied"), std::string::npos)
      << "another user's symlink made /root writable: " << p.out;
}

}  // namespace
}  // namespace vigil::test
