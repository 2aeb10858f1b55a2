// The gatekeeper (issue 13): vigil-init performs every path-based write-intent call
// itself, on the bytes it read, from the caller's view, so the log is exactly what
// happened. Each test drives a real `vigil run` and checks the host against the log.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

std::string probe_bin() {
  if (const char* p = std::getenv("VIGIL_PROBE"); p != nullptr && *p != '\0') return p;
  return VIGIL_DEFAULT_PROBE;
}

struct Record {
  std::string syscall, path, resolved, verdict, result;
};

std::vector<Record> fs_writes(const std::string& log) {
  std::vector<Record> out;
  std::ifstream f(log);
  std::string line;
  while (std::getline(f, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || j.value("kind", "") != "fs.write") continue;
    auto text = [&](const char* k) { return j[k].is_string() ? j.value(k, "") : std::string(); };
    out.push_back({text("syscall"), text("path"), text("resolved"), text("verdict"),
                   text("result")});
  }
  return out;
}

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  ::closedir(d);
  return out;
}

// Every file a racing command made on the host is in the log, under its real name, as a
// successful call: the kernel never re-reads what vigil-init judged.
void expect_every_file_logged(const std::string& op) {
  TempDir ws, cfg;
  make_dirs(ws / "r");
  const std::string log = cfg / "log.jsonl";
  auto o = run_vigil({"run", "--log", log, "--", probe_bin(), op, ws / "r", "20000"}, ws.path(),
                     600);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  ASSERT_EQ(o.out.rfind("ok ", 0), 0u) << o.out;
  // Any record naming the file counts (so that an older log without `result` is judged
  // on its names alone); the gatekeeper's also say the call succeeded.
  std::set<std::string> logged;
  long failed = 0;
  for (const Record& r : fs_writes(log)) {
    logged.insert(r.resolved);
    failed += !r.result.empty() && r.result != "0" && r.result != "EINVAL";
  }
  EXPECT_EQ(failed, 0) << "an open failed with something other than openat2's EINVAL";
  const auto made = names_in(ws / "r");
  ASSERT_FALSE(made.empty()) << "the race made no file at all: " << o.out;
  long unlogged = 0;
  std::string first;
  for (const std::string& n : made) {
    if (logged.count(ws / ("r/" + n)) != 0) continue;
    if (unlogged++ == 0) first = n;
  }
  EXPECT_EQ(unlogged, 0) << unlogged << " of " << made.size()
                         << " files on the host have no record, e.g. " << first;
}

TEST(Gatekeeper, RacingPathBytesLeaveNoUnloggedFile) { expect_every_file_logged("race-path"); }

TEST(Gatekeeper, RacingOpenat2FlagsLeaveNoUnloggedFile) {
  expect_every_file_logged("race-openat2");
}

// /dev/fd/N and its other spellings are the caller's fd, never vigil-init's: the record
// names the caller's file, with the kernel's verdict.
TEST(Gatekeeper, MagicLinkWritesAreTheCallersFile) {
  TempDir ws, out, cfg;
  make_dirs(ws / "a/b/.cfg");
  write_file(ws / "a/b/.cfg/tasks.json", "");
  write_file(out / "target.txt", "orig");
  ::chmod(out.path().c_str(), 0755);
  struct Case {
    std::string file, spelling, verdict, result;
  };
  const std::vector<Case> cases = {
      {ws / "a/b/.cfg/tasks.json", "/dev/fd/%d", "allowed", "0"},
      {ws / "a/b/.cfg/tasks.json", "/proc/./self/fd/%d", "allowed", "0"},
      {ws / "a/b/.cfg/tasks.json", "//proc/self/fd/%d", "allowed", "0"},
      {ws / "a/b/.cfg/tasks.json", "/proc/thread-self/fd/%d", "allowed", "0"},
      {out / "target.txt", "/dev/fd/%d", "denied", "EROFS"},
      {out / "target.txt", "//proc//self/./fd/%d", "denied", "EROFS"},
  };
  int i = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.spelling + " -> " + c.file);
    const std::string log = cfg / ("log" + std::to_string(i++) + ".jsonl");
    auto o = run_vigil({"run", "--log", log, "--", probe_bin(), "magic-write", c.file, c.spelling},
                       ws.path());
    bool found = false;
    std::string seen;
    for (const Record& r : fs_writes(log)) {
      seen += r.syscall + " " + r.path + " -> " + r.resolved + " " + r.result + "\n";
      if (r.resolved != c.file) continue;
      found = true;
      EXPECT_EQ(r.verdict, c.verdict);
      EXPECT_EQ(r.result, c.result);
    }
    EXPECT_TRUE(found) << "no record names " << c.file << "; saw:\n" << seen << o.err;
    EXPECT_EQ(o.out, c.result == "0" ? "ok\n" : "errno:" + c.result + "\n");
  }
  EXPECT_EQ(read_file(ws / "a/b/.cfg/tasks.json"), "xxxx");
  EXPECT_EQ(read_file(out / "target.txt"), "orig");
}

// A relative path of 4,094 bytes (the kernel's limit is 4,095 plus the NUL) is performed
// and logged with the kernel's verdict, inside and outside the writable root.
TEST(Gatekeeper, LongRelativePathsGetTheKernelsVerdict) {
  TempDir ws, cfg;
  make_dirs(ws / "d");
  auto pad = [](std::string tail, std::size_t total) {
    std::string p;
    while (p.size() + tail.size() + 2 <= total) p += "./";
    if (p.size() + tail.size() < total) p += "/";  // "//" is one separator to the kernel
    return p + tail;
  };
  // Up from the workspace to / and into /etc: a read-only place.
  std::string up;
  for (char c : ws.path()) up += c == '/' ? "../" : "";
  const std::string escape = pad(up + "etc/vigil-long", 4094);
  const std::string inside = pad("d/long.txt", 4094);
  ASSERT_EQ(escape.size(), 4094u);
  ASSERT_EQ(inside.size(), 4094u);
  const std::string log = cfg / "log.jsonl";
  auto o = run_vigil({"run", "--log", log, "--", "sh", "-c",
                      "echo x > \"$0\"; echo x > \"$1\"; true", escape, inside},
                     ws.path());
  std::map<std::string, Record> by_target;
  for (const Record& r : fs_writes(log)) by_target[r.resolved] = r;
  ASSERT_TRUE(by_target.count("/etc/vigil-long")) << o.err;
  EXPECT_EQ(by_target["/etc/vigil-long"].verdict, "denied");
  EXPECT_EQ(by_target["/etc/vigil-long"].result, "EROFS");
  ASSERT_TRUE(by_target.count(ws / "d/long.txt")) << o.err;
  EXPECT_EQ(by_target[ws / "d/long.txt"].verdict, "allowed");
  EXPECT_EQ(by_target[ws / "d/long.txt"].result, "0");
  EXPECT_TRUE(exists(ws / "d/long.txt"));
}

// mkdir -p over directories that exist: EEXIST is the command's own result, never a
// violation (it used to be "deny mkdir /tmp").
TEST(Gatekeeper, MkdirPOverExistingDirectoriesIsNoViolation) {
  TempDir ws, cfg;
  make_dirs(ws / "cache/x");
  const std::string log = cfg / "log.jsonl";
  auto o = run_vigil({"run", "--log", log, "--", "sh", "-c",
                      "mkdir -p \"$0/cache/x\" && mkdir -p \"$0/cache/x/y\" && mkdir -p /tmp /",
                      ws.path()},
                     ws.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err.find("<sandbox_violations>"), std::string::npos) << o.err;
  long eexist = 0;
  for (const Record& r : fs_writes(log)) {
    EXPECT_NE(r.verdict, "denied") << r.syscall << " " << r.resolved << " " << r.result;
    eexist += r.result == "EEXIST";
  }
  EXPECT_GE(eexist, 2) << "mkdir -p's EEXIST results are recorded as such";
  EXPECT_TRUE(exists(ws / "cache/x/y"));
}

// Execs record what ran: an fd exec by the fd's target, and every record by
// /proc/PID/exe once the exec has happened.
TEST(Gatekeeper, FdMemfdAndUnlinkedExecsAreRecordedByWhatRan) {
  TempDir ws, cfg;
  char real_true[4096] = {};
  ASSERT_NE(::realpath("/bin/true", real_true), nullptr);
  struct Case {
    std::string op, exe;
  };
  const std::vector<Case> cases = {
      {"exec-memfd", "/memfd:vigil-mem (deleted)"},
      {"exec-procfd", real_true},
      {"exec-unlinked", ws / "vigil-unlinked (deleted)"},
  };
  int i = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    const std::string log = cfg / ("log" + std::to_string(i++) + ".jsonl");
    auto o = run_vigil({"run", "--log", log, "--", probe_bin(), c.op, real_true, ws.path()},
                       ws.path());
    EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
    std::ifstream f(log);
    std::string line, seen;
    bool found = false;
    while (std::getline(f, line)) {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (!j.is_object() || j.value("kind", "") != "proc.exec") continue;
      const std::string exe = j["exe"].is_string() ? j.value("exe", "") : "";
      seen += exe + "\n";
      found = found || exe == c.exe;
    }
    EXPECT_TRUE(found) << "no proc.exec names " << c.exe << "; saw:\n" << seen;
  }
}

// Protected names at every depth are refused at the call (EACCES), each with a line in
// the block, and nothing reaches the host; git in the workspace keeps working.
TEST(Gatekeeper, PlainRoutesToProtectedNamesAreRefusedAndGitStillWorks) {
  if (::access("/usr/bin/git", X_OK) != 0) GTEST_SKIP() << "git is not installed";
  TempDir ws, cfg;
  const std::string log = cfg / "log.jsonl";
  const std::string script =
      "mkdir -p a/b c d e f; echo x > a/b/.bashrc; mkdir c/.vscode; mkdir -p c/g/.vscode;"
      "echo '{}' > d/.mcp.json; echo x > e/tmp && mv e/tmp e/.gitconfig;"
      "ln -s x f/.ripgreprc; mkdir -p p/.claude/commands; echo x > f/.zshrc;"
      "git init -q repo && cd repo && git config user.name t && git config user.email t@e &&"
      " echo a > f && git add f && git commit -qm m && git remote add o ../nowhere &&"
      " git worktree add -q ../wt && echo git-ok";
  auto o = run_vigil({"run", "--log", log, "--", "sh", "-c", script}, ws.path(), 120,
                     {{"GIT_CONFIG_NOSYSTEM", "1"}, {"HOME", cfg.path()}});
  EXPECT_NE(o.out.find("git-ok"), std::string::npos) << o.err;
  for (const char* rel : {"a/b/.bashrc", "c/.vscode", "c/g/.vscode", "d/.mcp.json",
                          "e/.gitconfig", "f/.ripgreprc", "p/.claude/commands", "f/.zshrc"}) {
    SCOPED_TRACE(rel);
    struct stat st {};
    EXPECT_NE(::lstat((ws / rel).c_str(), &st), 0) << "left on the host";
    bool refused = false;
    for (const Record& r : fs_writes(log)) {
      if (r.resolved == ws / rel && r.verdict == "denied" && r.result == "EACCES") refused = true;
    }
    EXPECT_TRUE(refused) << "no denied EACCES record";
  }
  EXPECT_NE(o.err.find("<sandbox_violations>"), std::string::npos);
  EXPECT_NE(o.err.find("protected name .vscode"), std::string::npos) << o.err;
  EXPECT_TRUE(exists(ws / "e/tmp"));  // the refused rename left its source
  EXPECT_TRUE(exists(ws / "repo/.git/HEAD"));
  EXPECT_TRUE(exists(ws / "wt/f"));
}

// An open that waits (a FIFO's writer with no reader yet) is performed on a thread of its
// own: the other processes' calls go on, among them the reader's, which lets it finish.
// A gatekeeper that waited in its loop would deadlock here (the run would time out: the
// bound is that deadlock's, not a speed, so it leaves a loaded machine minutes). The
// FIFO's record is queued by its thread before the writer is answered, so it cannot be
// left behind when the last process ends right after.
TEST(Gatekeeper, ABlockingFifoOpenDoesNotStallOtherCalls) {
  TempDir ws, cfg;
  const std::string log = cfg / "log.jsonl";
  auto o = run_vigil({"run", "--log", log, "--", "sh", "-c",
                      "mkfifo f; echo x > f & i=0; "
                      "while [ $i -lt 200 ]; do echo y > other.txt; i=$((i+1)); done; cat f"},
                     ws.path(), 300);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "x\n");
  bool fifo_open = false, other = false;
  std::string on_f;  // every record naming the FIFO, for the failure message
  for (const Record& r : fs_writes(log)) {
    if (r.resolved == ws / "f") on_f += r.syscall + " -> " + r.result + "; ";
    if (r.resolved == ws / "f" && r.syscall == "openat") fifo_open = r.result == "0";
    if (r.resolved == ws / "other.txt") other = r.result == "0";
  }
  EXPECT_TRUE(fifo_open) << "the FIFO's open is recorded with its result; records of f: "
                         << on_f;
  EXPECT_TRUE(other);
}

}  // namespace
}  // namespace vigil::test

namespace vigil::test {
namespace {

// vigil-init keeps each caller's cwd between calls (observer/cwd_cache.h): a chdir, in
// this thread or in another thread of the process, must be seen by the very next call.
// One process walks between two directories making a file in each; another pair of
// threads races chdir against creates. Every file is where the log says, under its name.
TEST(Gatekeeper, RelativeWritesFollowEveryChdir) {
  if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "needs /usr/bin/python3";
  TempDir ws, cfg;
  make_dirs(ws / "a");
  make_dirs(ws / "b");
  const std::string log = cfg / "log.jsonl";
  const std::string script =
      "import os, threading\n"
      "top = os.getcwd()\n"
      "for i in range(50):\n"
      "    os.chdir(top + ('/a' if i % 2 == 0 else '/b'))\n"
      "    os.close(os.open('seq%d' % i, os.O_WRONLY | os.O_CREAT, 0o644))\n"
      "os.chdir(top + '/a')\n"
      "stop = False\n"
      "def walk():\n"
      "    while not stop:\n"
      "        os.chdir(top + '/b'); os.chdir(top + '/a')\n"
      "t = threading.Thread(target=walk); t.start()\n"
      "for i in range(2000):\n"
      "    os.close(os.open('race%d' % i, os.O_WRONLY | os.O_CREAT, 0o644))\n"
      "stop = True; t.join()\n"
      "print('ok')\n";
  auto o = run_vigil({"run", "--log", log, "--", "/usr/bin/python3", "-c", script}, ws.path(), 300);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  std::set<std::string> logged;
  for (const Record& r : fs_writes(log))
    if (r.result == "0") logged.insert(r.resolved);
  long made = 0, unlogged = 0;
  std::string first;
  for (const char* dir : {"a", "b"}) {
    for (const std::string& n : names_in(ws / dir)) {
      ++made;
      const std::string path = ws / (std::string(dir) + "/" + n);
      if (logged.count(path) != 0) continue;
      if (unlogged++ == 0) first = path;
    }
  }
  EXPECT_EQ(made, 2050);
  EXPECT_EQ(unlogged, 0) << unlogged << " of " << made << " files have no record under their real name, e.g. " << first;
  for (int i = 0; i < 50; ++i) {
    const std::string want = ws / ((i % 2 == 0 ? "a/seq" : "b/seq") + std::to_string(i));
    EXPECT_EQ(::access(want.c_str(), F_OK), 0) << want << " is not where the process was";
    EXPECT_EQ(logged.count(want), 1u) << want;
  }
}

// A notification's pid is the calling thread's id. A thread that does not lead its
// process writes relative to a directory fd (rustc's codegen threads unlink and create
// through one): vigil-init must fetch that fd from the thread (a thread pidfd), not refuse
// the call as if the process could not be looked into.
TEST(Gatekeeper, AThreadsDirfdRelativeWritesArePerformed) {
  if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "needs /usr/bin/python3";
  TempDir ws, cfg;
  write_file(ws / "victim", "old");
  const std::string log = cfg / "log.jsonl";
  const std::string script =
      "import os, sys, threading\n"
      "fd = os.open('.', os.O_RDONLY | os.O_DIRECTORY)\n"
      "failed = []\n"
      "def work():\n"
      "    try:\n"
      "        os.close(os.open('made', os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))\n"
      "        os.mkdir('sub', dir_fd=fd)\n"
      "        os.unlink('victim', dir_fd=fd)\n"
      "    except OSError as e:\n"
      "        failed.append(repr(e))\n"
      "t = threading.Thread(target=work); t.start(); t.join()\n"
      "if failed: print(failed[0], file=sys.stderr); sys.exit(3)\n";
  auto o = run_vigil({"run", "--log", log, "--", "/usr/bin/python3", "-c", script}, ws.path(), 120);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(::access((ws / "made").c_str(), F_OK), 0);
  EXPECT_EQ(::access((ws / "sub").c_str(), F_OK), 0);
  EXPECT_NE(::access((ws / "victim").c_str(), F_OK), 0);
  std::set<std::string> done;
  for (const Record& r : fs_writes(log))
    if (r.result == "0") done.insert(r.resolved);
  for (const char* n : {"made", "sub", "victim"})
    EXPECT_EQ(done.count(ws / n), 1u) << n << " has no record with the kernel's result 0";
}

}  // namespace
}  // namespace vigil::test

namespace vigil::test {
namespace {

// An open for writing or a truncate must wait for another process to give up its lease on
// the file (the kernel breaks the lease, the holder gets SIGIO, the call waits until
// F_UNLCK). It waits on a thread of its own: meanwhile the holder's own writes go on, and
// the waiting call ends with the kernel's result, never an EAGAIN the caller did not ask
// for (it did not set O_NONBLOCK), and never holding every other call for the break.
TEST(Gatekeeper, ACallWaitingForALeaseBreakWaitsAloneAndSucceeds) {
  if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "needs /usr/bin/python3";
  struct Case {
    const char* call;
    const char* syscall;
  } cases[] = {{"os.close(os.open('leased', os.O_WRONLY))", "openat"},
               {"os.truncate('leased', 0)", "truncate"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.syscall);
    TempDir ws, cfg;
    const std::string log = cfg / "log.jsonl";
    const std::string script =
        "import fcntl, os, signal, subprocess, sys\n"
        "F_SETLEASE, F_RDLCK, F_UNLCK = 1024, 0, 2\n"
        "signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGIO])\n"
        "with open('leased', 'w') as f: f.write('x')\n"
        "fd = os.open('leased', os.O_RDONLY)\n"
        "fcntl.fcntl(fd, F_SETLEASE, F_RDLCK)\n"
        "w = subprocess.Popen([sys.executable, '-c', \"import os; " +
        std::string(c.call) +
        "; print('done', flush=True)\"])\n"
        "signal.sigwait([signal.SIGIO])  # the writer's call reached the kernel: a break\n"
        "for i in range(50):\n"
        "    os.close(os.open('other%d' % i, os.O_WRONLY | os.O_CREAT, 0o644))\n"
        "print('others done', flush=True)\n"
        "fcntl.fcntl(fd, F_SETLEASE, F_UNLCK)\n"
        "sys.exit(w.wait())\n";
    auto o = run_vigil({"run", "--log", log, "--", "/usr/bin/python3", "-c", script}, ws.path(),
                       60);
    EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
    EXPECT_EQ(o.out, "others done\ndone\n") << o.err;
    bool waited = false;
    int others = 0;
    for (const Record& r : fs_writes(log)) {
      if (r.resolved == ws / "leased" && r.syscall == c.syscall && r.result == "0") waited = true;
      if (r.resolved.rfind(ws / "other", 0) == 0 && r.result == "0") ++others;
    }
    EXPECT_TRUE(waited) << "the waiting call is recorded with its result, 0";
    EXPECT_EQ(others, 50);
  }
}

}  // namespace
}  // namespace vigil::test
