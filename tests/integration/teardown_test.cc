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
// vigil-init refuses to make a name it cannot name in full (a path past PATH_MAX:
// ENAMETOOLONG, issue 39), so a tree that deep is built the only way left: chains of
// directories made while their paths are short, then renamed one into the deepest of
// another, from the bottom up (each rename's target is still shallow). Files, links to
// the workspace and unreadable directories on the way, as before.
const char kDeepTree[] = R"PY(
import os, sys
ws = os.getcwd()
os.chdir(os.environ["TMPDIR"])
name = "d" * 48
per = 30                      # levels per chain: 30 * 49 bytes, well under PATH_MAX
chains = 3 * 4096 // (per * (len(name) + 1)) + 1
level = 0
def chain(top):
    global level
    path = top
    os.mkdir(path)
    dirs = [path]
    for i in range(per - 1):
        path = os.path.join(path, name)
        os.mkdir(path)
        dirs.append(path)
    for d in dirs:
        if level % 50 == 0:
            open(os.path.join(d, "f"), "w").write("x")
            os.symlink(ws, os.path.join(d, "link"))
        level += 1
    return dirs
built = []
for c in range(chains):
    built.append(chain("c%d" % c))
# From the bottom up: chain k+1 (holding everything below it) into chain k's deepest.
for c in range(chains - 1, 0, -1):
    os.rename("c%d" % c, os.path.join(built[c - 1][-1], name))
# Unreadable directories, made unreadable last (their paths are still short enough).
for d in reversed(built[0][1::7]):  # the deepest first: a parent made unreadable
    os.chmod(d, 0)                   # first would hide the rest
print("built", chains * per)
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
  ASSERT_NE(o.out.find("built "), std::string::npos) << o.out;
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
