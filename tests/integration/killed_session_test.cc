// A vigil killed with SIGKILL cannot clean up: its sandbox dies with it
// (--die-with-parent), but the placeholder files bwrap made in the workspace and the
// session directory stay. The next session sweeps them before it scans, so they are
// not mistaken for the user's own protected files.
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


TEST(KilledSession, NextSessionRemovesItsPlaceholdersAndDirectory) {
  TempDir ws, runtime, state;
  ASSERT_EQ(::chmod(runtime.path().c_str(), 0700), 0);
  const std::string marker = unique_marker("killed");
  const std::map<std::string, std::string> env = {{"XDG_RUNTIME_DIR", runtime.path()},
                                                  {"XDG_STATE_HOME", state.path()}};
  ASSERT_FALSE(exists(ws / ".bashrc"));

  const std::string bin = vigil_bin();
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(ws.path().c_str()) != 0) ::_exit(121);
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    ::execl(bin.c_str(), bin.c_str(), "run", "--", "sh", "-c", "echo up > ready; exec sleep 1000",
            marker.c_str(), nullptr);
    ::_exit(122);
  }
  for (int i = 0; i < 400 && !exists(ws / "ready"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  ASSERT_TRUE(exists(ws / "ready"));
  // The session is live: its placeholder and its directory exist.
  EXPECT_TRUE(exists(ws / ".bashrc"));
  ASSERT_EQ(session_dirs(runtime / "vigil").size(), 1u);

  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  // The sandbox goes with vigil.
  for (int i = 0; i < 400 && !pids_with_marker(marker).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  EXPECT_TRUE(pids_with_marker(marker).empty());
  // What it could not clean up.
  struct stat st {};
  ASSERT_EQ(::lstat((ws / ".bashrc").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_size, 0);
  EXPECT_EQ(session_dirs(runtime / "vigil").size(), 1u);

  // The next session in the same workspace sweeps it, then cleans up after itself.
  auto o = run_vigil({"run", "--", "true"}, ws.path(), 60, env);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_FALSE(exists(ws / ".bashrc"));
  EXPECT_TRUE(session_dirs(runtime / "vigil").empty());
  // A placeholder was not taken for the user's file: the user may create .bashrc now.
  EXPECT_EQ(o.err.find(".bashrc"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace vigil::test
