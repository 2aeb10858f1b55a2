// A vigil killed with SIGKILL cannot clean up: its sandbox dies with it
// (--die-with-parent), but the placeholder files bwrap made in the workspace and the
// session directory stay. The next session sweeps them before it scans, so they are
// not mistaken for the user's own protected files.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <string>
#include <thread>
#include <vector>

#include "supervisor/core/base/unique_fd.h"
#include "tests/integration/gatekeeper_kernel.h"
#include "tests/integration/harness.h"

namespace vigil::test {
namespace {


// Host pids of the command itself: a shell (argv[0] "sh") holding `marker` as a whole
// argument. bwrap and vigil-init carry the marker in their argv too (the command line they
// run); they are not the command.
std::vector<int> command_pids(const std::string& marker) {
  std::vector<int> out;
  for (const int pid : pids_with_marker(marker)) {
    const std::string cmd = read_file("/proc/" + std::to_string(pid) + "/cmdline");
    std::vector<std::string> argv;
    for (std::size_t at = 0; at < cmd.size();) {
      const std::size_t end = cmd.find('\0', at);
      argv.push_back(cmd.substr(at, end == std::string::npos ? std::string::npos : end - at));
      if (end == std::string::npos) break;
      at = end + 1;
    }
    if (argv.empty() || argv[0] != "sh") continue;
    for (const std::string& a : argv) {
      if (a == marker) out.push_back(pid);
    }
  }
  return out;
}

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
    // The command execs a shell that keeps the marker in its argv while it waits (`; :`
    // keeps sh from exec'ing sleep in its place): the marker names the command itself.
    ::execl(bin.c_str(), bin.c_str(), "run", "--", "sh", "-c",
            "echo up > ready; exec sh -c 'sleep 1000; :' \"$0\"", marker.c_str(), nullptr);
    ::_exit(122);
  }
  // A failed ASSERT below must not leave this vigil (and its sandbox) running.
  struct Reaper {
    pid_t pid;
    ~Reaper() {
      if (pid > 0 && ::kill(pid, SIGKILL) == 0) ::waitpid(pid, nullptr, 0);
    }
  } reaper{pid};
  for (int i = 0; i < 400 && !exists(ws / "ready"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  ASSERT_TRUE(exists(ws / "ready"));
  // The session is live: its directory exists, and its placeholder where the gatekeeper
  // is not in force (under it, no placeholders are bound).
  const bool placeholders = !kernel_has_gatekeeper();
  EXPECT_EQ(exists(ws / ".bashrc"), placeholders);
  ASSERT_EQ(session_dirs(runtime / "vigil").size(), 1u);
  // The command is running (what "the sandbox goes with vigil" is then about). The exec
  // after "ready" may not have happened yet: wait for it.
  for (int i = 0; i < 400 && command_pids(marker).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  ASSERT_FALSE(command_pids(marker).empty()) << "the command is not running";

  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  reaper.pid = -1;
  // The sandbox goes with vigil.
  for (int i = 0; i < 400 && !pids_with_marker(marker).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  EXPECT_TRUE(pids_with_marker(marker).empty());
  EXPECT_TRUE(command_pids(marker).empty()) << "the command outlived vigil";
  // What it could not clean up.
  if (placeholders) {
    struct stat st {};
    ASSERT_EQ(::lstat((ws / ".bashrc").c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ(st.st_size, 0);
  }
  EXPECT_EQ(session_dirs(runtime / "vigil").size(), 1u);

  // The next session in the same workspace sweeps it, then cleans up after itself.
  auto o = run_vigil({"run", "--", "true"}, ws.path(), 60, env);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_FALSE(exists(ws / ".bashrc"));
  EXPECT_TRUE(session_dirs(runtime / "vigil").empty());
  // A placeholder was not taken for the user's file: the user may create .bashrc now.
  EXPECT_EQ(o.err.find(".bashrc"), std::string::npos) << o.err;
}

// Signals are forwarded whatever the output path is doing: with a stdout nobody reads,
// vigil is blocked handing `yes`'s output on, and SIGTERM must still end the command and
// vigil, leaving nothing running.
TEST(SignalledSession, SigtermEndsTheCommandWhenNobodyReadsItsOutput) {
  TempDir ws;
  const std::string marker = unique_marker("unread");
  int out[2];
  ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
  UniqueFd read_end(out[0]), write_end(out[1]);
  const std::string bin = vigil_bin();
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(ws.path().c_str()) != 0) ::_exit(121);
    ::dup2(write_end.get(), 1);
    ::dup2(::open("/dev/null", O_WRONLY | O_CLOEXEC), 2);
    ::execl(bin.c_str(), bin.c_str(), "run", "--", "yes", marker.c_str(), nullptr);
    ::_exit(122);
  }
  write_end.reset();
  // Wait until vigil's stdout is full (vigil is then blocked writing to it) and the
  // command runs.
  const int capacity = ::fcntl(read_end.get(), F_GETPIPE_SZ);
  int queued = 0;
  for (int i = 0; i < 800 && (queued < capacity - PIPE_BUF || pids_with_marker(marker).empty());
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    ::ioctl(read_end.get(), FIONREAD, &queued);
  }
  ASSERT_GE(queued, capacity - PIPE_BUF) << "vigil's stdout never filled";
  ASSERT_FALSE(pids_with_marker(marker).empty());

  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  int status = 0;
  pid_t done = 0;
  for (int i = 0; i < 400 && done == 0; ++i) {  // 10 s at most
    done = ::waitpid(pid, &status, WNOHANG);
    if (done == 0) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  if (done == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  read_end.reset();
  EXPECT_EQ(done, pid) << "vigil did not end after SIGTERM while its stdout was full";
  for (int i = 0; i < 400 && !pids_with_marker(marker).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  EXPECT_TRUE(pids_with_marker(marker).empty()) << "the command is still running";
}

}  // namespace
}  // namespace vigil::test
