// The kernel interfaces every sandbox masks (bwrap/argv_builder.h kernel_masks()), probed
// through a real `vigil run` as root and as an unprivileged user. As root the masks are
// the only thing that stands between the command and the host's sysctls: without them
// root inside may write fs.lease-break-time and open kernel.core_pattern for writing.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

// Each line: NAME RESULT, where RESULT is "ok" or the errno name python saw.
const char kProbe[] = R"PY(
import errno, os
def tryit(name, f):
    try:
        f(); print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, str(e.errno)))
def rewrite_lease():
    with open("/proc/sys/fs/lease-break-time") as r: v = r.read()
    with open("/proc/sys/fs/lease-break-time", "w") as w: w.write(v)
tryit("lease-break-time", rewrite_lease)
tryit("core_pattern", lambda: os.close(os.open("/proc/sys/kernel/core_pattern", os.O_WRONLY)))
def size(p):
    with open(p, "rb") as f: print(p, "bytes", len(f.read(4096)))
for p in ("/proc/keys", "/proc/timer_list"):
    if os.path.exists(p): tryit(p, lambda: size(p))
print("/sys/firmware entries", len(os.listdir("/sys/firmware")) if os.path.isdir("/sys/firmware") else 0)
tryit("firmware-write", lambda: open("/sys/firmware/x", "w"))
)PY";

bool has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

TEST(KernelMasks, ProcSysAndKernelFilesAreMasked) {
  if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "needs python3";
  TempDir ws;
  const std::string before = read_file("/proc/sys/fs/lease-break-time");
  auto o = run_vigil({"run", "--", "python3", "-c", kProbe}, ws.path());
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  // Read-only for root too (EROFS, the mount), not only refused by permissions.
  EXPECT_TRUE(has(o.out, "lease-break-time EROFS\n")) << o.out;
  // (An unprivileged user is refused by permissions first: the file is the host root's.)
  EXPECT_TRUE(has(o.out, ::geteuid() == 0 ? "core_pattern EROFS\n" : "core_pattern E")) << o.out;
  EXPECT_FALSE(has(o.out, "core_pattern ok")) << o.out;
  // Readable, but empty.
  for (const std::string p : {"/proc/keys", "/proc/timer_list"}) {
    if (::access(p.c_str(), F_OK) == 0) {
      EXPECT_TRUE(has(o.out, p + " bytes 0\n")) << o.out;
    }
  }
  EXPECT_TRUE(has(o.out, "/sys/firmware entries 0\n")) << o.out;
  EXPECT_FALSE(has(o.out, "firmware-write ok")) << o.out;
  // The host's value is as it was (the probe wrote the same value back, if it could).
  EXPECT_EQ(read_file("/proc/sys/fs/lease-break-time"), before);
  // And the model is told.
  EXPECT_TRUE(has(o.err, "/proc/sys/kernel/core_pattern")) << o.err;
}

TEST(KernelMasks, ControlTheHostSeesTheRealFiles) {
  // Without the masks the probe above would see what the host sees: the checks there
  // cannot pass on a host where the files are empty or absent anyway.
  if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "needs python3";
  auto o = run_vigil({"run", "--sandbox", "off", "--", "python3", "-c", kProbe}, "/");
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_FALSE(has(o.out, "lease-break-time EROFS")) << o.out;
  EXPECT_FALSE(has(o.out, "/sys/firmware entries 0\n")) << o.out;
  if (::geteuid() == 0) {
    EXPECT_TRUE(has(o.out, "lease-break-time ok\n")) << o.out;
    EXPECT_TRUE(has(o.out, "core_pattern ok\n")) << o.out;
  }
}

}  // namespace
}  // namespace vigil::test
