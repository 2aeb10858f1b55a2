// Which names a sandbox could write on the host (issue 31, item 4): the deepest mount
// decides, the sandbox's own trees (/dev, /dev/shm, /proc, the session temp dir, a denyRead
// tmpfs) are never the host's, and a name that is not lexically normal is never in scope.
#include "supervisor/core/fs/host_scope.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vigil {
namespace {

PathRule rule(const std::string& path, PathKind kind = PathKind::kDir, bool temp = false) {
  PathRule r;
  r.written = r.literal = r.resolved = path;
  r.kind = kind;
  r.session_temp = temp;
  return r;
}

TEST(HostScopeTest, Table) {
  Policy p;
  p.fs.allow_write = {rule("/home/u/proj"), rule("/home/u/.npm"), rule("/missing", PathKind::kMissing),
                      rule("/run/user/1/vigil/abc/tmp", PathKind::kDir, true), rule("/tmp/shared")};
  p.fs.deny_read = {rule("/home/u/proj/.secrets"), rule("/home"), rule("/tmp/shared/hidden/deeper")};
  const HostScope s = host_scope_of(p, "/run/user/1/vigil");
  struct Row {
    std::string path;
    bool in;
  };
  for (const Row& r : std::vector<Row>{
           {"/home/u/proj/a.txt", true},  // below the denyRead /home, a deeper writable root
           {"/home/u/proj", true},
           {"/home/u/proj/.secrets/x", false},  // a tmpfs of the sandbox's own
           {"/home/u/.npm/x", true},
           {"/home/u/other", false},
           {"/dev/shm/x", false},
           {"/dev/null", false},
           {"/proc/self/comm", false},
           {"/run/user/1/vigil/abc/tmp/f", false},
           {"/run/user/1/vigil/other/tmp/f", false},
           {"/missing/x", false},
           {"/tmp/shared/x", true},
           {"/tmp/shared/hidden/deeper/x", false},
           {"/tmp/x", false},
           {"/home/u/proj/../.ssh/id", false},
           {"/home/u/proj/./x", false},
           {"/home/u/proj//x", false},
           {"relative/x", false},
           {"", false},
       }) {
    EXPECT_EQ(in_host_scope(s, r.path), r.in) << r.path;
  }
}

TEST(HostScopeTest, AWritableRootBelowTheSandboxsOwnTreeIsTheHosts) {
  Policy p;
  p.fs.allow_write = {rule("/dev/shm/mine")};
  const HostScope s = host_scope_of(p, "/tmp/vigil-0");
  EXPECT_TRUE(in_host_scope(s, "/dev/shm/mine/x")) << "bound from the host over the sandbox's /dev";
  EXPECT_FALSE(in_host_scope(s, "/dev/shm/other"));
}

TEST(HostScopeTest, LegacyScopeIsAllButTheSandboxsOwnTrees) {
  const HostScope s = legacy_host_scope("/tmp/vigil-0");
  EXPECT_TRUE(in_host_scope(s, "/home/u/x"));
  EXPECT_FALSE(in_host_scope(s, "/dev/shm/x"));
  EXPECT_FALSE(in_host_scope(s, "/proc/1/environ"));
  EXPECT_FALSE(in_host_scope(s, "/tmp/vigil-0/abc/tmp/f"));
}

}  // namespace
}  // namespace vigil
