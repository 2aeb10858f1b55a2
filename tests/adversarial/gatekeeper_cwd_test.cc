// vigil-init trusts the cwd it keeps per caller while no chdir-family call is in flight
// (observer/cwd_cache.h): the calls that change a cwd are trapped, and every task that may
// share the changed cwd (a clone(CLONE_FS) child, which it cannot tell from a thread) is
// checked again until the call has returned. Real `vigil run`, real processes: every
// relative write lands where the kernel would have put it and is recorded under that name.
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

// The resolved names of the successful fs.write records.
std::set<std::string> written(const std::string& log) {
  std::set<std::string> out;
  std::ifstream f(log);
  std::string line;
  while (std::getline(f, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || j.value("kind", "") != "fs.write" || !j["resolved"].is_string()) continue;
    if (j["result"].is_string() && j.value("result", "") == "0") out.insert(j.value("resolved", ""));
  }
  return out;
}

// clone(CLONE_FS | SIGCHLD) without a new stack (the child runs on a copy, as after fork)
// shares the parent's cwd: the child's chdir or fchdir moves the parent too. The parent
// first writes (so its cwd is kept), then the child moves both and ends without another
// trapped call, then the parent writes relative names: they land in the new cwd.
TEST(GatekeeperCwd, ACloneFsChildsChdirMovesItsParentsRelativeWrites) {
  if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "needs /usr/bin/python3";
  TempDir ws, cfg;
  make_dirs(ws / "a");
  make_dirs(ws / "b");
  const std::string log = cfg / "log.jsonl";
  const std::string script =
      "import ctypes, os, platform\n"
      "if platform.machine() != 'x86_64': print('skip'); raise SystemExit(0)\n"
      "libc = ctypes.CDLL(None, use_errno=True)\n"
      "SYS_clone, CLONE_FS, SIGCHLD = 56, 0x200, 17\n"
      "top = os.getcwd()\n"
      "os.chdir(top + '/a')\n"
      "for i in range(40):\n"
      "    here, there = ('a', 'b') if i % 2 == 0 else ('b', 'a')\n"
      "    os.close(os.open('pre%d' % i, os.O_WRONLY | os.O_CREAT, 0o644))\n"
      "    pid = libc.syscall(SYS_clone, CLONE_FS | SIGCHLD, 0, 0, 0, 0)\n"
      "    if pid < 0: raise OSError(ctypes.get_errno(), 'clone')\n"
      "    if pid == 0:\n"
      "        if i % 4 < 2:\n"
      "            os.chdir(top + '/' + there)\n"
      "        else:\n"
      "            fd = os.open(top + '/' + there, os.O_RDONLY | os.O_DIRECTORY)\n"
      "            os.fchdir(fd)\n"
      "        os._exit(0)\n"
      "    _, status = os.waitpid(pid, 0)\n"
      "    assert status == 0, status\n"
      "    for k in range(3):\n"
      "        os.close(os.open('post%d_%d' % (i, k), os.O_WRONLY | os.O_CREAT, 0o644))\n"
      "print('ok')\n";
  auto o = run_vigil({"run", "--log", log, "--", "/usr/bin/python3", "-c", script}, ws.path(), 300);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  if (o.out.find("skip") != std::string::npos) GTEST_SKIP() << "the raw clone number is x86_64's";
  ASSERT_NE(o.out.find("ok"), std::string::npos) << o.out << o.err;
  const std::set<std::string> logged = written(log);
  for (int i = 0; i < 40; ++i) {
    const std::string here = i % 2 == 0 ? "a" : "b", there = i % 2 == 0 ? "b" : "a";
    const std::string pre = ws / (here + "/pre" + std::to_string(i));
    EXPECT_EQ(::access(pre.c_str(), F_OK), 0) << pre;
    EXPECT_EQ(logged.count(pre), 1u) << pre;
    for (int k = 0; k < 3; ++k) {
      const std::string post = "/post" + std::to_string(i) + "_" + std::to_string(k);
      const std::string want = ws / (there + post);
      EXPECT_EQ(::access(want.c_str(), F_OK), 0)
          << want << " is not in the cwd the clone(CLONE_FS) child moved its parent to";
      EXPECT_NE(::access((ws / (here + post)).c_str(), F_OK), 0) << here + post << " landed in the old cwd";
      EXPECT_EQ(logged.count(want), 1u) << want << " has no record under its real name";
    }
  }
}

// Threads share one cwd: one moves it with fchdir (the other half with chdir) while the
// other creates relative names in a loop. Every file is recorded where it really landed.
// (The walker sleeps a little every eighth move: a thread that only ever calls chdir can
// keep Python's GIL from the writer for minutes on a loaded machine.)
TEST(GatekeeperCwd, AThreadsFchdirIsSeenByTheOtherThreadsWrites) {
  if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "needs /usr/bin/python3";
  TempDir ws, cfg;
  make_dirs(ws / "a");
  make_dirs(ws / "b");
  const std::string log = cfg / "log.jsonl";
  const std::string script =
      "import os, threading, time\n"
      "top = os.getcwd()\n"
      "fds = [os.open(top + d, os.O_RDONLY | os.O_DIRECTORY) for d in ('/a', '/b')]\n"
      "os.fchdir(fds[0])\n"
      "stop = False\n"
      "def walk():\n"
      "    n = 0\n"
      "    while not stop:\n"
      "        if n % 2: os.fchdir(fds[n % 4 // 2])\n"
      "        else: os.chdir(top + ('/a', '/b')[n % 4 // 2])\n"
      "        n += 1\n"
      "        if n % 8 == 0: time.sleep(0.0001)\n"
      "t = threading.Thread(target=walk); t.start()\n"
      "for i in range(2000):\n"
      "    os.close(os.open('f%d' % i, os.O_WRONLY | os.O_CREAT, 0o644))\n"
      "stop = True; t.join()\n"
      "os.fchdir(fds[1])\n"
      "for i in range(20):\n"
      "    os.close(os.open('last%d' % i, os.O_WRONLY | os.O_CREAT, 0o644))\n"
      "print('ok')\n";
  auto o = run_vigil({"run", "--log", log, "--", "/usr/bin/python3", "-c", script}, ws.path(), 300);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::set<std::string> logged = written(log);
  long made = 0, unlogged = 0;
  std::string first;
  for (const char* dir : {"a", "b"}) {
    DIR* d = ::opendir((ws / dir).c_str());
    ASSERT_NE(d, nullptr);
    while (dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n == "." || n == "..") continue;
      ++made;
      const std::string path = ws / (std::string(dir) + "/" + n);
      if (logged.count(path) == 0 && unlogged++ == 0) first = path;
    }
    ::closedir(d);
  }
  EXPECT_EQ(made, 2020);
  EXPECT_EQ(unlogged, 0) << unlogged << " of " << made << " files have no record under their real name, e.g. " << first;
  for (int i = 0; i < 20; ++i) {
    const std::string want = ws / ("b/last" + std::to_string(i));
    EXPECT_EQ(::access(want.c_str(), F_OK), 0) << want << " is not where the process was";
    EXPECT_EQ(logged.count(want), 1u) << want;
  }
}

}  // namespace
}  // namespace vigil::test
