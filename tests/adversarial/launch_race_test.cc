// The launch race, won: what bwrap builds when a neighbour's swap lands between its two
// resolutions of a bind's path. The race itself is microseconds wide; these tests put
// its outcome in place every time with a bwrap wrapper (settings: bwrapPath) that edits
// the options vigil sends (--args FD) the way a won race would, then runs the real
// bwrap. The supervisor must refuse each sandbox before anything in it runs: not the
// command, not vigil-init (which a swapped mount can replace).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

// The wrapper: reads the options from --args FD, applies EDIT (python, on `opts`, a
// list of str; `init` is vigil-init's path from the command), passes them on in a new
// memfd and execs the real bwrap with the rest of its argv unchanged.
std::string write_wrapper(const TempDir& dir, const std::string& edit) {
  const std::string path = dir / "racing-bwrap";
  write_file(path, "#!/usr/bin/python3\n"
                   "import os, sys\n"
                   "argv = sys.argv[1:]\n"
                   "i = argv.index('--args')\n"
                   "with open('/proc/self/fd/' + argv[i + 1], 'rb') as f:\n"
                   "    opts = [t.decode() for t in f.read().split(b'\\0')[:-1]]\n"
                   "init = argv[argv.index('--') + 1]\n" +
                       edit +
                       "fd = os.memfd_create('racing-bwrap', 0)\n"
                       "os.write(fd, b''.join(t.encode() + b'\\0' for t in opts))\n"
                       "os.lseek(fd, 0, 0)\n"
                       "argv[i + 1] = str(fd)\n"
                       "os.execv('/usr/bin/bwrap', ['bwrap'] + argv)\n");
  ::chmod(path.c_str(), 0755);
  return path;
}

bool have_tools() { return ::access("/usr/bin/python3", X_OK) == 0 && ::access("/usr/bin/bwrap", X_OK) == 0; }

std::string settings(const TempDir& dir, const std::string& bwrap) {
  const std::string path = dir / "settings.json";
  write_file(path, R"({"bwrapPath": ")" + bwrap + R"(", "filesystem": {"allowWrite": ["."]}})");
  return path;
}

// A workspace directory laid read-only over vigil-init's own directory (a bind whose
// destination was swapped for a symlink to it): the sandbox would run the workspace's
// "vigil-init", with no seccomp filters and no checks. An in-sandbox check cannot catch
// this; the old build ran the planted program.
TEST(LaunchRace, AMountOverVigilInitIsRefusedBeforeAnythingRuns) {
  if (!have_tools()) GTEST_SKIP() << "needs python3 and /usr/bin/bwrap";
  TempDir ws, tools;
  make_dirs(ws / "evil");
  write_file(ws / "evil/vigil-init", "#!/bin/sh\ntouch '" + (ws / "planted-init-ran") + "'\n");
  ::chmod((ws / "evil/vigil-init").c_str(), 0755);
  const std::string wrapper = write_wrapper(
      tools, "opts += ['--ro-bind', '" + (ws / "evil") + "', os.path.dirname(init)]\n");
  const auto o = run_vigil({"run", "--settings", settings(tools, wrapper), "--", "touch",
                            ws / "command-ran"},
                           ws.path());
  EXPECT_FALSE(exists(ws / "planted-init-ran")) << "the planted vigil-init ran";
  EXPECT_FALSE(exists(ws / "command-ran"));
  EXPECT_EQ(o.exit_code, 125) << o.err;
  EXPECT_NE(o.err.find("refusing to run the command"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("that vigil did not plan"), std::string::npos) << o.err;
}

// /dev/null laid over a host file outside every writable root (a protected name's cap
// whose destination was swapped): refused, though the mount is read-only.
TEST(LaunchRace, AReadOnlyMountOutsideThePlanIsRefused) {
  if (!have_tools()) GTEST_SKIP() << "needs python3 and /usr/bin/bwrap";
  TempDir ws, tools, outside;
  write_file(outside / "config", "kept\n");
  const std::string wrapper = write_wrapper(
      tools, "opts += ['--ro-bind', '/dev/null', '" + (outside / "config") + "']\n");
  const auto o = run_vigil({"run", "--settings", settings(tools, wrapper), "--", "touch",
                            ws / "command-ran"},
                           ws.path());
  EXPECT_FALSE(exists(ws / "command-ran"));
  EXPECT_EQ(o.exit_code, 125) << o.err;
  EXPECT_NE(o.err.find(outside / "config"), std::string::npos) << o.err;
}

// A pin's bind source swapped for a directory outside (the source resolved through a
// symlink, the destination not): the writable mount at the pin holds another directory.
TEST(LaunchRace, ASwappedBindSourceIsRefusedBeforeTheCommandRuns) {
  if (!have_tools()) GTEST_SKIP() << "needs python3 and /usr/bin/bwrap";
  TempDir ws, tools, outside;
  make_dirs(ws / "p");
  write_file(ws / "p/.bashrc", "");  // a protected name inside: the plan pins p
  write_file(outside / ".bashrc", "");
  const std::string pin = ws / "p";
  const std::string wrapper = write_wrapper(
      tools, "for k in range(len(opts) - 2):\n"
             "    if opts[k] == '--bind' and opts[k + 1] == '" + pin + "':\n"
             "        opts[k + 1] = '" + outside.path() + "'\n");
  const auto o = run_vigil({"run", "--settings", settings(tools, wrapper), "--", "sh", "-c",
                            "touch '" + pin + "/escaped'; touch '" + (ws / "command-ran") + "'"},
                           ws.path());
  EXPECT_FALSE(exists(ws / "command-ran"));
  EXPECT_FALSE(exists(outside / "escaped"));
  EXPECT_EQ(o.exit_code, 125) << o.err;
  EXPECT_NE(o.err.find(pin + " is not the directory vigil planned"), std::string::npos) << o.err;
}

// The control: the same wrapper with no edit runs the command (so the refusals above
// are the check's, not the wrapper's).
TEST(LaunchRace, TheWrapperAloneChangesNothing) {
  if (!have_tools()) GTEST_SKIP() << "needs python3 and /usr/bin/bwrap";
  TempDir ws, tools;
  const std::string wrapper = write_wrapper(tools, "");
  const auto o = run_vigil({"run", "--settings", settings(tools, wrapper), "--", "touch",
                            ws / "command-ran"},
                           ws.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(exists(ws / "command-ran"));
}

}  // namespace
}  // namespace vigil::test
