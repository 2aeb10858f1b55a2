// Hostile commands against the mount policy itself, through a real `vigil run`: each
// asserts what the command could do inside AND the state of the host file afterwards.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdio.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "tests/integration/gatekeeper_kernel.h"
#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

// Polls for a host path, up to `seconds`.
bool wait_for(const std::string& path, int seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < until) {
    if (exists(path)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// Two sessions in one workspace. The first has no .bashrc, so its bwrap makes an empty
// placeholder file there; the second, started meanwhile, finds that file and caps it
// with a read-only bind like any existing .bashrc. When the first ends and unlinks its
// placeholder, the kernel detaches every mount on that name in other namespaces too:
// the second session's protection would vanish, and its command could write a .bashrc
// that stays on the host.
// Under the gatekeeper there are no placeholders: the second session's write is refused
// at the call, and nothing is left on the host either way.
TEST(MountPolicy, OverlappingSessionsKeepEachOthersPlaceholders) {
  TempDir ws;
  const std::string wait_b = "touch a-up; while [ ! -e b-up ]; do sleep 0.02; done";
  // std::jthread: joined on every way out, an ASSERT's early return included (a joinable
  // std::thread there would abort the whole binary).
  Outcome a;
  std::jthread first([&] { a = run_vigil({"run", "-c", wait_b}, ws.path(), 60); });
  ASSERT_TRUE(wait_for(ws / "a-up", 30)) << "the first session did not start";
  EXPECT_EQ(exists(ws / ".bashrc"), !kernel_has_gatekeeper())
      << "a placeholder is made exactly where the gatekeeper is not in force";
  Outcome b;
  std::jthread second([&] {
    b = run_vigil({"run", "-c",
                   "touch b-up; while [ ! -e a-done ]; do sleep 0.02; done; "
                   "if echo 'echo pwned' >> .bashrc; then echo wrote; else echo refused; fi"},
                  ws.path(), 60);
  });
  first.join();
  EXPECT_EQ(a.exit_code, 0) << a.err;
  write_file(ws / "a-done", "");
  second.join();
  EXPECT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(b.out, "refused\n") << b.err;
  // Nothing the second session wrote reached the host's .bashrc, and the last session to
  // end cleared the placeholders of both.
  EXPECT_FALSE(exists(ws / ".bashrc")) << "left on the host: '" << read_file(ws / ".bashrc") << "'";
}

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      if (std::strncmp(e->d_name, "escaped-", 8) == 0) out.emplace_back(e->d_name);
    }
    ::closedir(d);
  }
  return out;
}

// A command of another session sharing the workspace (here: the test, which has the
// same access to it) swaps a directory this session pins for a relative symlink to a
// directory outside, over and over, while sessions start. bwrap resolves the pin's
// source and destination when it mounts: without a check, the writable bind follows the
// link and the command writes outside every writable root. The link's target holds the
// same protected name the scan saw, so the rest of bwrap's mounts succeed.
TEST(MountPolicy, PinSwappedForASymlinkDuringLaunchOpensNothingOutside) {
  TempDir ws, outside;
  write_file(outside / ".bashrc", "");
  make_dirs(ws / "p");
  write_file(ws / "p/.bashrc", "");
  // ws and outside are siblings under /tmp: "../<outside>" from inside ws.
  const std::string rel = "../" + outside.path().substr(outside.path().rfind('/') + 1);
  ASSERT_EQ(::symlink(rel.c_str(), (ws / "plink").c_str()), 0) << std::strerror(errno);
  // Stopped and joined on every way out of the test (std::jthread's stop token).
  std::jthread swapper([&](std::stop_token stop) {
    const std::string a = ws / "p", b = ws / "plink";
    while (!stop.stop_requested()) {
      ::renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE);
    }
  });
  // Launches until the launch check has refused at least 3 swapped pins (the race hit,
  // and caught by the check meant: its own message), with at least 30 launches in all.
  int ran = 0, caught = 0, other = 0, launches = 0;
  std::string other_err;
  for (; launches < 200 && (launches < 30 || caught < 3); ++launches) {
    const auto o = run_vigil({"run", "-c",
                              "touch '" + (outside / "escaped-") + std::to_string(launches) +
                                  "' 2>/dev/null; true"},
                             ws.path(), 60);
    if (o.exit_code == 0) {
      ++ran;
    } else if (o.exit_code == 125 &&
               o.err.find("refusing to run the command") != std::string::npos) {
      ++caught;
    } else {
      ++other;  // e.g. bwrap itself failing on a path swapped under it
      other_err = o.err;
    }
  }
  swapper.request_stop();
  swapper.join();
  std::fprintf(stderr, "note: %d launches: %d ran, %d refused by the mount check, %d other\n",
               launches, ran, caught, other);
  EXPECT_GE(caught, 1) << "the race was never hit (or never caught by the launch check) in "
                       << launches << " launches; last other failure: " << other_err;
  EXPECT_TRUE(names_in(outside.path()).empty())
      << names_in(outside.path()).size() << " launches wrote outside the writable roots";
}

// .git/config and .git/hooks are protected, but git takes both from the directory that
// .git/commondir names, when that file exists: a command that writes it (pointing at a
// config with core.fsmonitor, or at hooks of its own) runs code in the user's next git
// command outside the sandbox. vigil-init refuses its creation at the call (the
// gatekeeper); without it, vigil caps the name with a file that names the repository
// itself ("."), which git reads as no redirection at all, inside and outside.
TEST(MountPolicy, GitCommondirCannotRedirectConfigAndHooks) {
  TempDir ws;
  auto init = run_vigil({"run", "--sandbox", "off", "--", "git", "init", "-q", "."}, ws.path());
  ASSERT_EQ(init.exit_code, 0) << init.err;
  make_dirs(ws / "evil/hooks");
  write_file(ws / "evil/config", "[core]\n\tfsmonitor = \"touch pwned; false\"\n");
  auto o = run_vigil({"run", "-c",
                      "if echo ../evil > .git/commondir; then echo wrote; else echo refused; fi; "
                      "git status --porcelain >/dev/null && echo git-ok"},
                     ws.path());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "refused\ngit-ok\n") << o.err;
  // Nothing is left in the repository, and git on the host runs nothing of the command's.
  EXPECT_FALSE(exists(ws / ".git/commondir")) << read_file(ws / ".git/commondir");
  auto status =
      run_vigil({"run", "--sandbox", "off", "--", "git", "status", "--porcelain"}, ws.path());
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_FALSE(exists(ws / "pwned"));
}

}  // namespace
}  // namespace vigil::test
