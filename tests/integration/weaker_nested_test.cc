// enableWeakerNestedSandbox through `vigil run`, in a container as Docker makes one as far
// as /proc goes: a mount namespace of the test's own where a /proc file (kcore) is masked by a
// bind of /dev/null (Docker masks it, and more, the same way). bwrap's user namespace then
// gets that mask locked, and the kernel refuses it a new /proc ("Can't mount proc"). With
// the key vigil runs anyway, keeping that /proc; the gatekeeper still judges each write in
// the caller's own cwd (its pid is translated into that /proc's numbers), and the
// weakening is said: the command sees the processes around it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "supervisor/core/base/unique_fd.h"
#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

bool write_proc(const char* path, const std::string& text) {
  UniqueFd fd(::open(path, O_WRONLY | O_CLOEXEC));
  return fd && ::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size());
}

// In the forked child, before exec: a mount namespace (and, unprivileged, a user
// namespace mapping the user to itself) with a /proc file masked (/proc/kcore where the
// kernel has one, as Docker masks it).
const char* masked_file() {
  for (const char* f : {"/proc/kcore", "/proc/timer_list", "/proc/uptime"})
    if (::access(f, F_OK) == 0) return f;
  return nullptr;
}

bool enter_masked_proc() {
  const uid_t uid = ::geteuid();
  const gid_t gid = ::getegid();
  const auto fail = [](const char* what) {
    ::dprintf(2, "test set-up: %s: %s\n", what, std::strerror(errno));
    return false;
  };
  if (::unshare(CLONE_NEWNS | (uid == 0 ? 0 : CLONE_NEWUSER)) != 0) return fail("unshare");
  if (uid != 0) {
    if (!write_proc("/proc/self/setgroups", "deny") ||
        !write_proc("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1") ||
        !write_proc("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1"))
      return fail("id maps");
  }
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return fail("private /");
  if (::mount("/dev/null", masked_file(), nullptr, MS_BIND, nullptr) != 0)
    return fail("mask a /proc file");
  return true;
}

TEST(WeakerNestedSandbox, RunsWhereANewProcIsRefusedAndSaysWhatItGivesUp) {
  if (masked_file() == nullptr) GTEST_SKIP() << "no /proc file to mask here";
  TempDir ws, cfg;
  make_dirs(ws / "sub");
  write_file(cfg / "plain.json", R"({"filesystem": {"allowWrite": ["."]}})");
  write_file(cfg / "weaker.json",
             R"({"filesystem": {"allowWrite": ["."]}, "enableWeakerNestedSandbox": true})");
  // Without the key: the container's refusal, as srt users meet it.
  const Outcome plain = run_vigil({"run", "--settings", cfg / "plain.json", "--", "true"},
                                  ws.path(), 60, {}, "", {}, enter_masked_proc);
  ASSERT_EQ(plain.err.find("test set-up:"), std::string::npos) << plain.err;
  if (plain.exit_code == 0) GTEST_SKIP() << "this kernel mounts /proc over a masked one anyway";
  EXPECT_NE(plain.err.find("proc"), std::string::npos) << plain.err;

  // With it: the command runs; a relative write from a subdirectory lands where the
  // caller's own cwd says, and a write outside the workspace is refused and reported.
  const std::string me = std::to_string(::getpid());
  const std::string script =
      "cd sub && echo in > rel.txt && cat rel.txt; "
      "echo out > /etc/vigil-weaker-test 2>/dev/null || echo refused; "
      "test -d /proc/" +
      me + " && echo sees-the-test-process";
  const Outcome o = run_vigil({"run", "--settings", cfg / "weaker.json", "--log", cfg / "log.jsonl",
                               "--", "sh", "-c", script},
                              ws.path(), 60, {}, "", {}, enter_masked_proc);
  ASSERT_EQ(o.err.find("test set-up:"), std::string::npos) << o.err;
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "in\nrefused\nsees-the-test-process\n") << o.err;
  EXPECT_EQ(read_file(ws / "sub/rel.txt"), "in\n");
  EXPECT_FALSE(exists("/etc/vigil-weaker-test"));
  EXPECT_NE(o.err.find("/etc/vigil-weaker-test"), std::string::npos) << "the block names it";
  EXPECT_NE(o.err.find("enableWeakerNestedSandbox weakens the sandbox"), std::string::npos)
      << o.err;
  // explain shows the argv without --proc and says why.
  const Outcome e = run_vigil({"explain", "--settings", cfg / "weaker.json"}, ws.path());
  EXPECT_EQ(e.out.find("--proc /proc"), std::string::npos) << e.out;
  EXPECT_NE(e.out.find("no fresh /proc (enableWeakerNestedSandbox)"), std::string::npos) << e.out;
}

}  // namespace
}  // namespace vigil::test
