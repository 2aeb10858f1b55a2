// Teardown always finishes: whatever the command leaves in its $TMPDIR (a tree three
// times deeper than PATH_MAX, directories it made unreadable, symlinks out of it), the
// session directory is gone when vigil exits, and a killed session's is swept by the
// next one. nftw, used before, failed on such a tree with ENAMETOOLONG and left it for
// good, and every later sweep failed the same way.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

// Builds the tree in $TMPDIR, every 70th directory chmod 000 on the way back up, a symlink
// to the workspace every 50 levels; then runs argv[1] (if any) as a shell command.
const char kDeepTree[] = R"PY(
import os, sys
ws = os.getcwd()
os.chdir(os.environ["TMPDIR"])
name = "d" * 48
n = 3 * 4096 // (len(name) + 1) + 1
for i in range(n):
    os.mkdir(name)
    os.chdir(name)
    if i % 50 == 0:
        open("f", "w").write("x")
        os.symlink(ws, "link")
for i in range(n):
    os.chdir("..")
    if i % 70 == 0:
        os.chmod(name, 0)
print("built", n)
sys.stdout.flush()
if len(sys.argv) > 1:
    os.chdir(ws)
    os.execvp("sh", ["sh", "-c", sys.argv[1]])
)PY";


class Teardown : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "needs python3";
    ASSERT_EQ(::chmod(runtime.path().c_str(), 0700), 0);
    write_file(ws / "keep", "mine");
  }
  TempDir ws, runtime;
  std::map<std::string, std::string> env() const { return {{"XDG_RUNTIME_DIR", runtime.path()}}; }
};

TEST_F(Teardown, ATreeDeeperThanPathMaxInTmpdirGoesWithTheSession) {
  auto o = run_vigil({"run", "--", "python3", "-c", kDeepTree}, ws.path(), 120, env());
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  ASSERT_NE(o.out.find("built 251"), std::string::npos) << o.out;
  EXPECT_TRUE(session_dirs(runtime / "vigil").empty()) << "the session directory stayed";
  EXPECT_EQ(o.err.find("cannot remove"), std::string::npos) << o.err;
  EXPECT_EQ(read_file(ws / "keep"), "mine");  // the links were not followed
}

TEST_F(Teardown, AKilledSessionsDeepTreeIsSweptByTheNextSession) {
  const std::string marker = unique_marker("deep");
  const std::string bin = vigil_bin();
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(ws.path().c_str()) != 0) ::_exit(121);
    ::setenv("XDG_RUNTIME_DIR", runtime.path().c_str(), 1);
    ::execl(bin.c_str(), bin.c_str(), "run", "--", "python3", "-c", kDeepTree,
            "echo up > ready; exec sleep 1000", marker.c_str(), nullptr);
    ::_exit(122);
  }
  for (int i = 0; i < 2400 && !exists(ws / "ready"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  ASSERT_TRUE(exists(ws / "ready"));
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  for (int i = 0; i < 400 && !pids_with_marker(marker).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  ASSERT_EQ(session_dirs(runtime / "vigil").size(), 1u);  // left behind, deep tree and all

  auto o = run_vigil({"run", "--", "true"}, ws.path(), 120, env());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(session_dirs(runtime / "vigil").empty()) << "the sweep left the killed session";
  EXPECT_EQ(read_file(ws / "keep"), "mine");
}

}  // namespace
}  // namespace vigil::test
