// The observer's accuracy: real writes through a real `vigil run`, each checked against
// the verdict the kernel actually gave (ground truth on the host), and the session log's
// fs.write record for it checked for the exact verdict.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "supervisor/core/base/unique_fd.h"
#include "tests/integration/harness.h"
#include "tests/support/bounded_wait.h"

extern char** environ;

namespace vigil::test {
namespace {

std::string probe_bin() {
  if (const char* p = std::getenv("VIGIL_PROBE"); p != nullptr && *p != '\0') return p;
  return VIGIL_DEFAULT_PROBE;
}

struct Seen {
  std::string syscall, resolved, verdict;
};

std::vector<Seen> fs_writes(const std::string& log) {
  std::vector<Seen> out;
  std::ifstream f(log);
  std::string line;
  while (std::getline(f, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || j.value("kind", "") != "fs.write") continue;
    out.push_back({j.value("syscall", ""), j["resolved"].is_string() ? j.value("resolved", "") : "",
                   j.value("verdict", "")});
  }
  return out;
}

struct Case {
  std::string name;
  std::vector<std::string> command;  // run in the workspace
  std::string resolved;              // the target the observer must name
  std::string verdict;               // "allowed" | "denied" | "ephemeral" | "none" (no event)
  std::string settings;              // optional settings JSON
  // The command's own result: "" derives it from the verdict (allowed, ephemeral, none:
  // succeeds; denied: fails); "fail" where the kernel refuses an allowed call for its own
  // reasons (ENOENT, ENOTDIR, ...). A probe reports through its output ("ok" / "errno:").
  std::string result = "";
};

// What the host shows of a path: kind, mode, owner, size, mtime, ctime (which every
// change of metadata moves: chown, chmod, xattrs, flags) and content. Compared before and
// after each case: an allowed write must show on the host, a denied one must not.
std::string host_state(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return "absent";
  std::string s = std::to_string(st.st_mode) + " " + std::to_string(st.st_uid) + ":" +
                  std::to_string(st.st_gid) + " " + std::to_string(st.st_size) + " " +
                  std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) +
                  " " + std::to_string(st.st_ctim.tv_sec) + "." +
                  std::to_string(st.st_ctim.tv_nsec);
  if (S_ISREG(st.st_mode)) s += " " + read_file(path);
  return s;
}

class ObserverAccuracy : public ::testing::Test {
 protected:
  void SetUp() override {
    make_dirs(ws_ / "a/b/.vscode");
    write_file(ws_ / "a/b/.vscode/x", "orig");
    write_file(ws_ / "inside.txt", "orig");
    write_file(out_ / "target.txt", "orig");
    make_dirs(out_ / "dir");
    make_dirs(ws_ / "sub");
    make_dirs(ws_ / "secret");
    make_dirs(ws_ / ".git/objects");
    make_dirs(ws_ / ".git/hooks");
    write_file(ws_ / ".git/config", "[core]\n");
    ASSERT_EQ(::symlink((out_ / "target.txt").c_str(), (ws_ / "out-link").c_str()), 0);
    ASSERT_EQ(::symlink((ws_ / "inside.txt").c_str(), (ws_ / "in-link").c_str()), 0);
    ASSERT_EQ(::symlink((out_ / "dir").c_str(), (ws_ / "dirlink").c_str()), 0);
    ASSERT_EQ(::symlink("sub/../out-link", (ws_ / "rel-link").c_str()), 0);
    ::chmod(out_.path().c_str(), 0755);
  }
  TempDir ws_, out_, cfg_;
};

TEST_F(ObserverAccuracy, EveryWriteGetsTheVerdictTheKernelGave) {
  const std::string P = probe_bin();
  const std::string W = ws_.path(), O = out_.path();
  const std::vector<Case> cases = {
      {"write inside", {"sh", "-c", "echo x > new.txt"}, W + "/new.txt", "allowed", ""},
      {"write outside", {"sh", "-c", "echo x > " + O + "/new.txt"}, O + "/new.txt", "denied", ""},
      {"write /etc", {"sh", "-c", "echo x > /etc/vigil-acc"}, "/etc/vigil-acc", "denied", ""},
      {"nested mandatory deny",
       {"sh", "-c", "echo x >> a/b/.vscode/x"},
       W + "/a/b/.vscode/x",
       "denied",
       ""},
      {"symlink pointing outside",
       {"sh", "-c", "echo x >> out-link"},
       O + "/target.txt",
       "denied",
       ""},
      // Calls other than open follow a symlink in the last name as the call defines:
      // chmod, truncate, utimes, setxattr act on the target; lchown on the link.
      {"chmod through a symlink pointing outside",
       {"chmod", "600", "out-link"},
       O + "/target.txt",
       "denied",
       ""},
      {"truncate through a symlink pointing outside",
       {P, "truncate", "out-link"},
       O + "/target.txt",
       "denied",
       ""},
      {"utimes through a symlink pointing outside",
       {P, "utimes", "out-link"},
       O + "/target.txt",
       "denied",
       ""},
      {"setxattr through a symlink pointing outside",
       {P, "setxattr", "out-link"},
       O + "/target.txt",
       "denied",
       ""},
      {"lchown acts on the link itself", {P, "lchown", "out-link"}, W + "/out-link", "allowed", ""},
      // The kernel fails O_CREAT|O_EXCL on any symlink with EEXIST: nothing is written
      // through it, so it is judged at the link, not where it points.
      {"O_EXCL does not follow a symlink",
       {P, "open-excl", "out-link"},
       W + "/out-link",
       "allowed",
       "", "fail"},
      {"a relative symlink chained to one pointing outside",
       {"sh", "-c", "echo x >> rel-link"},
       O + "/target.txt",
       "denied",
       ""},
      {"a name relative to a dirfd that is a file: ENOTDIR, not the sandbox",
       {P, "openat-notdir", W + "/inside.txt"},
       W + "/inside.txt/x",
       "allowed",
       "", "fail"},
      {"futimens (utimensat with no path) on an fd outside",
       {P, "futimens", O + "/target.txt"},
       O + "/target.txt",
       "denied",
       ""},
      {"futimens on an fd inside",
       {P, "futimens", W + "/inside.txt"},
       W + "/inside.txt",
       "allowed",
       ""},
      {"fsetxattr on an fd outside",
       {P, "fsetxattr", O + "/target.txt"},
       O + "/target.txt",
       "denied",
       ""},
      // Writes through an fd opened read-only: the open left no event, the write must.
      {"fchmod on an fd outside",
       {P, "fchmod", O + "/target.txt"},
       O + "/target.txt",
       "denied",
       ""},
      {"fchmod on an fd inside",
       {P, "fchmod", W + "/inside.txt"},
       W + "/inside.txt",
       "allowed",
       ""},
      {"fchown on an fd outside",
       {P, "fchown", O + "/target.txt"},
       O + "/target.txt",
       "denied",
       ""},
      {"fchownat with an empty name and AT_EMPTY_PATH: the fd's own file",
       {P, "fchownat-empty", O + "/target.txt"},
       O + "/target.txt",
       "denied",
       ""},
      {"chattr (FS_IOC_SETFLAGS) on an fd outside",
       {P, "ioctl-setflags", O + "/target.txt"},
       O + "/target.txt",
       "denied",
       ""},
      {"chattr on an fd inside",
       {P, "ioctl-setflags", W + "/inside.txt"},
       W + "/inside.txt",
       "allowed",
       ""},
      {"FS_IOC_SETFLAGS with the request's upper 32 bits set (the kernel ignores them)",
       {P, "ioctl-setflags-upper", O + "/target.txt"},
       O + "/target.txt",
       "denied",
       ""},
      // The newest path calls (Linux 6.13 and 6.17), which libseccomp 2.5.4 cannot name.
      {"setxattrat outside", {P, "setxattrat", O + "/target.txt"}, O + "/target.txt", "denied", ""},
      {"removexattrat outside",
       {P, "removexattrat", O + "/target.txt"},
       O + "/target.txt",
       "denied",
       ""},
      {"file_setattr outside",
       {P, "file_setattr", O + "/target.txt"},
       O + "/target.txt",
       "denied",
       ""},
      {"file_setattr inside",
       {P, "file_setattr", W + "/inside.txt"},
       W + "/inside.txt",
       "allowed",
       ""},
      {"symlink pointing inside",
       {"sh", "-c", "echo x >> in-link"},
       W + "/inside.txt",
       "allowed",
       ""},
      {"link/../x climbs out of the target",
       {"sh", "-c", "echo x > dirlink/../esc.txt"},
       O + "/esc.txt",
       "denied",
       ""},
      {"rename out of the workspace",
       {"mv", "inside.txt", O + "/moved.txt"},
       O + "/moved.txt",
       "denied",
       ""},
      {"rename into the workspace",
       {"mv", O + "/target.txt", W + "/in.txt"},
       O + "/target.txt",
       "denied",
       ""},
      {"hard link inside", {"ln", "inside.txt", "hard.txt"}, W + "/hard.txt", "allowed", ""},
      {"hard link outside", {"ln", "inside.txt", O + "/hard.txt"}, O + "/hard.txt", "denied", ""},
      {"setxattr outside", {P, "setxattr", O + "/target.txt"}, O + "/target.txt", "denied", ""},
      {"futimesat outside", {P, "futimesat", O + "/target.txt"}, O + "/target.txt", "denied", ""},
      {"read-only openat2: no event",
       {P, "openat2-ro", W + "/inside.txt"},
       W + "/inside.txt",
       "none",
       ""},
      {"writing openat2 outside", {P, "openat2-wr", O + "/o2.txt"}, O + "/o2.txt", "denied", ""},
      {"/dev/shm",
       {"sh", "-c", "echo x > /dev/shm/vigil-acc"},
       "/dev/shm/vigil-acc",
       "allowed",
       ""},
      {"/proc/self/comm", {"sh", "-c", "echo name > /proc/self/comm"}, "", "allowed", ""},
      {"relative through a dirfd",
       {P, "openat-dirfd", W + "/sub"},
       W + "/sub/rel.txt",
       "allowed",
       ""},
      {"relative after chdir",
       {"sh", "-c", "cd sub && echo x > c.txt"},
       W + "/sub/c.txt",
       "allowed",
       ""},
      {"ENOENT is not a sandbox denial",
       {"sh", "-c", "echo x > nodir/x"},
       W + "/nodir/x",
       "allowed",
       "", "fail"},
      {"mkdir outside", {"mkdir", O + "/newdir"}, O + "/newdir", "denied", ""},
      {"chmod outside", {"chmod", "600", O + "/target.txt"}, O + "/target.txt", "denied", ""},
      {"unlink inside", {"rm", "inside.txt"}, W + "/inside.txt", "allowed", ""},
      {"git hook",
       {"sh", "-c", "echo x > .git/hooks/pre-commit"},
       W + "/.git/hooks/pre-commit",
       "denied",
       ""},
      {"git config", {"sh", "-c", "echo x >> .git/config"}, W + "/.git/config", "denied", ""},
      {"git objects",
       {"sh", "-c", "echo x > .git/objects/o"},
       W + "/.git/objects/o",
       "allowed",
       ""},
      {"symlink created outside", {"ln", "-s", "x", O + "/sl"}, O + "/sl", "denied", ""},
      {"denyRead dir is ephemeral",
       {"sh", "-c", "echo x > secret/e.txt"},
       W + "/secret/e.txt",
       "ephemeral",
       R"({"filesystem": {"allowWrite": ["."], "denyRead": ["./secret"]}})"},
  };
  int checked = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string log = cfg_ / ("log-" + std::to_string(checked++) + ".jsonl");
    std::vector<std::string> args = {"run", "--log", log};
    if (!c.settings.empty()) {
      const std::string s = cfg_ / ("s" + std::to_string(checked) + ".json");
      write_file(s, c.settings);
      args.insert(args.end(), {"--settings", s});
    }
    args.push_back("--");
    args.insert(args.end(), c.command.begin(), c.command.end());
    // Host paths only (not /proc, /dev/shm: the sandbox's own).
    const bool on_host = c.resolved.rfind(W, 0) == 0 || c.resolved.rfind(O, 0) == 0;
    const std::string before = on_host ? host_state(c.resolved) : "";
    auto o = run_vigil(args, ws_.path());
    const bool succeeded = o.exit_code == 0 && o.out.rfind("errno:", 0) == std::string::npos;
    const std::string want = !c.result.empty() ? c.result : c.verdict == "denied" ? "fail" : "ok";
    EXPECT_EQ(succeeded ? "ok" : "fail", want)
        << "the command's own result: exit " << o.exit_code << ", out " << o.out << o.err;
    if (on_host) {
      const std::string after = host_state(c.resolved);
      if (c.verdict == "allowed" && want == "ok") {
        EXPECT_NE(after, before) << "an allowed write left no trace on the host";
      } else {
        EXPECT_EQ(after, before) << "the host changed where the write was " << c.verdict;
      }
    }
    const auto seen = fs_writes(log);
    bool found = false;
    for (const auto& s : seen) {
      const bool same = c.resolved.empty() ? s.resolved.find("/comm") != std::string::npos
                                           : s.resolved == c.resolved;
      if (!same) continue;
      found = true;
      EXPECT_EQ(s.verdict, c.verdict) << s.syscall << " " << s.resolved << "\n" << o.err;
    }
    if (c.verdict == "none") {
      EXPECT_FALSE(found) << "a read-only open produced an event";
    } else {
      std::string all;
      for (const auto& s : seen) all += s.syscall + " " + s.resolved + " " + s.verdict + "\n";
      EXPECT_TRUE(found) << "no fs.write for " << c.resolved << "; saw:\n" << all << o.err;
    }
  }
  // Ground truth on the host for the denied ones.
  EXPECT_EQ(read_file(O + "/target.txt"), "orig");
  EXPECT_FALSE(exists(O + "/new.txt"));
  EXPECT_FALSE(exists(O + "/esc.txt"));
  EXPECT_FALSE(exists(O + "/hard.txt"));
  EXPECT_EQ(read_file(W + "/a/b/.vscode/x"), "orig");
  EXPECT_FALSE(exists(W + "/secret/e.txt"));  // the tmpfs went with the sandbox
}

}  // namespace
}  // namespace vigil::test

namespace vigil::test {
namespace {

// What a session log holds for one target, and the observer's own count.
struct LogCounts {
  long observer_lines = 0;                  // fs.write and proc.exec records (what reached the log)
  long writes_to = 0;                       // fs.write records for the given resolved path
  std::map<std::string, long> verdicts_to;  // ... by verdict
  long stats_events = -1, stats_dropped = -1;
};

LogCounts count_log(const std::string& log, const std::string& resolved) {
  LogCounts c;
  std::ifstream f(log);
  std::string line;
  while (std::getline(f, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object()) continue;
    const std::string kind = j.value("kind", "");
    // Every line vigil-init writes counts as one of its events: the calls it saw and the
    // pre-images it took (fs.image with src observer) before changing a file.
    if (kind == "fs.write" || kind == "proc.exec" ||
        (kind == "fs.image" && j.value("src", "") == "observer"))
      ++c.observer_lines;
    if (kind == "fs.write" && j.value("resolved", "") == resolved) {
      ++c.writes_to;
      ++c.verdicts_to[j.value("verdict", "")];
    }
    if (kind == "observer.stats") {
      c.stats_events = j.value("events", -1L);
      c.stats_dropped = j.value("dropped", -1L);
    }
  }
  return c;
}

// Lossless by default: a burst of 20,000 denied writes yields exactly 20,000 events in the
// session log (srt delivers 4%-65% of such a burst), and nothing is reported dropped.
TEST(ObserverLoad, TwentyThousandDeniedWritesAreTwentyThousandEvents) {
  TempDir ws, cfg;
  const std::string log = cfg / "load.jsonl";
  auto o = run_vigil({"run", "--log", log, "--", "python3", "-c",
                      "import os\n"
                      "n = 0\n"
                      "for i in range(20000):\n"
                      "  try:\n"
                      "    os.open('/etc/vigil-load', os.O_WRONLY | os.O_CREAT, 0o644)\n"
                      "  except OSError:\n"
                      "    n += 1\n"
                      "print(n)\n"},
                     ws.path(), 300);
  EXPECT_EQ(o.out, "20000\n") << o.err.substr(0, 2000);
  LogCounts c = count_log(log, "/etc/vigil-load");
  EXPECT_EQ(c.writes_to, 20000);
  EXPECT_EQ(c.verdicts_to["denied"], 20000);
  EXPECT_EQ(c.stats_dropped, 0);
  // The model is told once, with the count.
  EXPECT_NE(o.err.find("deny write /etc/vigil-load (a system directory, outside the writable "
                       "roots: write inside the workspace or $TMPDIR instead) (x20000)"),
            std::string::npos)
      << o.err.substr(o.err.size() > 2000 ? o.err.size() - 2000 : 0);
}

}  // namespace
}  // namespace vigil::test

namespace vigil::test {
namespace {

// 100,000 allowed writes complete, and every one is in the log: the observer's buffer
// is bounded (it holds the workload rather than grow), so nothing is lost or left behind.
TEST(ObserverLoad, HundredThousandAllowedWritesAllDelivered) {
  TempDir ws, cfg;
  const std::string log = cfg / "load100k.jsonl";
  auto o = run_vigil({"run", "--log", log, "--", "python3", "-c",
                      "import os\n"
                      "for i in range(100000):\n"
                      "  os.close(os.open('f', os.O_WRONLY | os.O_CREAT, 0o644))\n"
                      "print('done')\n"},
                     ws.path(), 600);
  EXPECT_EQ(o.out, "done\n") << o.err.substr(0, 2000);
  LogCounts c = count_log(log, ws.path() + "/f");
  EXPECT_EQ(c.verdicts_to["allowed"], 100000);
  EXPECT_EQ(c.stats_dropped, 0);
  EXPECT_EQ(o.err.find("<sandbox_violations>"), std::string::npos)
      << "allowed writes are never listed";
}

}  // namespace
}  // namespace vigil::test

namespace vigil::test {
namespace {

// The `vigil run` supervisor among the processes whose command line holds `marker`, once
// the command itself (python3) is running inside: stopped any earlier, it would not have
// started the sandbox at all.
int supervisor_pid(const std::string& marker) {
  bool command_started = false;
  for (const int pid : pids_with_marker(marker)) {
    const std::string cmd = read_file("/proc/" + std::to_string(pid) + "/cmdline");
    command_started |= cmd.substr(0, cmd.find('\0')).find("python3") != std::string::npos;
  }
  if (!command_started) return -1;
  for (const int pid : pids_with_marker(marker)) {
    const std::string cmd = read_file("/proc/" + std::to_string(pid) + "/cmdline");
    const std::string argv0 = cmd.substr(0, cmd.find('\0'));
    if (argv0.size() >= 5 && argv0.compare(argv0.size() - 5, 5, "vigil") == 0 &&
        cmd.compare(argv0.size() + 1, 4, std::string("run\0", 4)) == 0) {
      return pid;
    }
  }
  return -1;
}

// Stops the supervisor (the vigil whose argv holds `marker`, started by this test) once
// the command runs, lets the command start its burst (writes `go`), keeps it stopped while
// `hold` runs, then resumes it. Sets `stopped` when it could stop it.
std::thread pause_supervisor(const std::string& marker, const TempDir& ws,
                             std::atomic<bool>& stopped, std::function<void()> hold) {
  return std::thread([&ws, &stopped, marker, hold = std::move(hold)] {
    int pid = -1;
    for (int i = 0; i < 3000 && pid < 0; ++i) {
      pid = supervisor_pid(marker);
      if (pid < 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    stopped = pid > 0 && ::kill(pid, SIGSTOP) == 0;
    write_file(ws / "go", "");  // even if not stopped: the test fails, it does not hang
    if (!stopped) return;
    hold();
    ::kill(pid, SIGCONT);
  });
}

// "overflow": "drop" loses events instead of holding the command, and counts every one it
// loses: the supervisor is stopped (SIGSTOP) while the command makes 50,000 writes, so the
// pipe fills and lines must be dropped; then every attempt the observer saw is either in
// the session log or in the dropped count, exactly.
TEST(ObserverLoad, DropModeCountsEveryDroppedEvent) {
  TempDir ws, cfg;
  const std::string log = cfg / "drop.jsonl";
  const std::string settings = cfg / "drop.json";
  write_file(
      settings,
      R"({"filesystem": {"allowWrite": ["."]}, "vigil": {"observer": {"overflow": "drop"}}})");
  const std::string marker = unique_marker("drop");
  const std::string script =
      "import os, time\n"
      "# " +
      marker +
      "\n"
      "while not os.path.exists('go'): time.sleep(0.01)\n"
      "for i in range(50000):\n"
      "  os.close(os.open('f', os.O_WRONLY | os.O_CREAT, 0o644))\n"
      "os.close(os.open('done', os.O_WRONLY | os.O_CREAT, 0o644))\n"
      "print('done')\n";
  std::atomic<bool> stopped{false};
  // Stopped while the burst happens, then resumed.
  std::thread stopper = pause_supervisor(marker, ws, stopped, [&] {
    for (int i = 0; i < 30000 && !exists(ws / "done"); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  });
  auto o = run_vigil({"run", "--settings", settings, "--log", log, "--", "python3", "-c", script},
                     ws.path(), 600);
  stopper.join();
  ASSERT_TRUE(stopped) << "could not find and stop the supervisor";
  EXPECT_EQ(o.exit_code, 0) << o.err.substr(0, 2000);
  EXPECT_EQ(o.out, "done\n");
  const LogCounts c = count_log(log, ws.path() + "/f");
  ASSERT_GE(c.stats_events, 50000) << "no observer.stats line, or too few events";
  EXPECT_GT(c.stats_dropped, 0) << "the pipe never filled: nothing was dropped";
  EXPECT_LT(c.writes_to, 50000);
  // Every attempt is accounted for: delivered + dropped == seen.
  EXPECT_EQ(c.observer_lines + c.stats_dropped, c.stats_events);
}

// Lossless (the default) under the same stop: nothing is dropped, the command waits.
TEST(ObserverLoad, BlockModeHoldsTheCommandInsteadOfDropping) {
  TempDir ws, cfg;
  const std::string log = cfg / "block.jsonl";
  const std::string marker = unique_marker("block");
  const std::string script =
      "import os, time\n"
      "# " +
      marker +
      "\n"
      "while not os.path.exists('go'): time.sleep(0.01)\n"
      "for i in range(30000):\n"
      "  os.close(os.open('f', os.O_WRONLY | os.O_CREAT, 0o644))\n"
      "print('done')\n";
  std::atomic<bool> stopped{false};
  // The hold, asserted: with the supervisor stopped, the command ends up asleep inside a
  // trapped openat (the kernel's /proc/PID/syscall names the call it sleeps in), and is
  // found there again later without having woken once in between (its voluntary context
  // switch count unchanged): it waits instead of running on.
  std::atomic<bool> held{false};
  std::thread stopper = pause_supervisor(marker, ws, stopped, [&] {
    // "<switches>" while the command sleeps in openat, else "".
    auto asleep_in_openat = [&]() -> std::string {
      for (const int pid : pids_with_marker(marker)) {
        const std::string dir = "/proc/" + std::to_string(pid);
        const std::string cmd = read_file(dir + "/cmdline");
        if (cmd.substr(0, cmd.find('\0')).find("python3") == std::string::npos) continue;
        if (read_file(dir + "/syscall").rfind(std::to_string(SYS_openat) + " ", 0) != 0) continue;
        const std::string status = read_file(dir + "/status");
        const std::size_t at = status.find("\nvoluntary_ctxt_switches:");
        if (at == std::string::npos) continue;
        return status.substr(at, status.find('\n', at + 1) - at);
      }
      return "";
    };
    for (int i = 0; i < 1000 && !held; ++i) {
      const std::string first = asleep_in_openat();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // a sampling interval
      held = !first.empty() && asleep_in_openat() == first;
    }
  });
  auto o = run_vigil({"run", "--log", log, "--", "python3", "-c", script}, ws.path(), 600);
  stopper.join();
  ASSERT_TRUE(stopped) << "could not find and stop the supervisor";
  EXPECT_TRUE(held) << "the command was never seen waiting while the supervisor was stopped";
  EXPECT_EQ(o.out, "done\n") << o.err.substr(0, 2000);
  const LogCounts c = count_log(log, ws.path() + "/f");
  EXPECT_EQ(c.writes_to, 30000);
  EXPECT_EQ(c.stats_dropped, 0);
  EXPECT_EQ(c.observer_lines, c.stats_events);
}

// The supervisor's reader gone: `vigil run` cannot show this (the supervisor dying takes
// the sandbox with it: bwrap --die-with-parent), so vigil-init is run directly with an
// events pipe whose read end is closed after the first line. The command still runs to
// completion with its own output and status, vigil-init says nothing on the command's
// stderr, and it is not killed by SIGPIPE.
TEST(ObserverLoad, ReaderGoneTheCommandStillCompletes) {
  const std::string init = vigil_init_bin();
  if (init.empty()) GTEST_SKIP() << "vigil-init not found next to " << vigil_bin();
  TempDir ws;
  int events[2], out[2], err[2];
  ASSERT_EQ(::pipe2(events, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(err, O_CLOEXEC), 0);
  const std::string script =
      "import os, sys\n"
      "for i in range(5000):\n"
      "  os.close(os.open('f', os.O_WRONLY | os.O_CREAT, 0o644))\n"
      "print('done')\n"
      "sys.exit(3)\n";
  const std::string fd = std::to_string(events[1]);
  std::vector<std::string> args = {init, "--events-fd", fd, "--", "python3", "-c", script};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, events[1], events[1]);  // clears its CLOEXEC
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  posix_spawn_file_actions_addchdir_np(&fa, ws.path().c_str());
  pid_t pid = -1;
  ASSERT_EQ(::posix_spawn(&pid, init.c_str(), &fa, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  UniqueFd ev_read(events[0]), out_read(out[0]), err_read(err[0]);
  UniqueFd(events[1]).reset();
  UniqueFd(out[1]).reset();
  UniqueFd(err[1]).reset();
  // Read one line of events (the command's exec), then go away.
  std::string first;
  char c = 0;
  while (::read(ev_read.get(), &c, 1) == 1 && c != '\n') first.push_back(c);
  EXPECT_NE(first.find("\"kind\":"), std::string::npos) << first;
  ev_read.reset();
  // Bounded reads and wait: a vigil-init that hangs fails here instead of hanging CI.
  bool out_late = false, err_late = false;
  const std::string stdout_text =
      read_until_eof(out_read.get(), std::chrono::seconds(60), &out_late);
  const std::string stderr_text =
      read_until_eof(err_read.get(), std::chrono::seconds(60), &err_late);
  const auto status = wait_child_status(pid, std::chrono::seconds(30));
  ASSERT_FALSE(out_late || err_late) << "vigil-init's output did not end";
  ASSERT_TRUE(status) << "vigil-init did not exit (killed)";
  ASSERT_TRUE(WIFEXITED(*status)) << "vigil-init was killed by signal " << WTERMSIG(*status);
  EXPECT_EQ(WEXITSTATUS(*status), 3);
  EXPECT_EQ(stdout_text, "done\n");
  EXPECT_EQ(stderr_text, "") << "the observer must not write to the command's stderr";
}

}  // namespace
}  // namespace vigil::test

namespace vigil::test {
namespace {

// A command cannot make its own exec record too long to be logged: argv of control
// bytes (six times as long escaped) arrives, cut and marked truncated, never dropped as
// an over-long line.
TEST(ObserverLimits, AnExecWithHugeHostileArgvIsLoggedTruncated) {
  TempDir ws, cfg;
  const std::string log = cfg / "argv.jsonl";
  auto o = run_vigil({"run", "--log", log, "--", "python3", "-c",
                      "import os\n"
                      "os.execv('/bin/true', ['true'] + ['\\x01' * 4000] * 16)\n"},
                     ws.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  std::ifstream f(log);
  std::string line;
  bool found = false;
  long malformed = -1;
  while (std::getline(f, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object()) continue;
    if (j.value("kind", "") == "proc.exec" && j["argv"].is_array() && !j["argv"].empty() &&
        j["argv"][0] == "true") {
      found = true;
      EXPECT_TRUE(j.value("truncated", false));
      EXPECT_GE(j["argv"].size(), 2u);
      EXPECT_LT(j["argv"].size(), 17u);
    }
    if (j.value("kind", "") == "session.end") {
      malformed = j["counters"].value("lines.malformed", 0L);
    }
  }
  EXPECT_TRUE(found) << "the exec of true was not logged";
  EXPECT_EQ(malformed, 0) << "a line was refused";
}

}  // namespace
}  // namespace vigil::test
