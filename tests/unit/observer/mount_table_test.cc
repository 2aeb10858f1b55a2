// The observer's verdicts come from the sandbox's mount table: a table of mountinfo
// snippets (as bwrap builds them) and paths, each with the verdict the kernel would give.
#include "observer/mount_table.h"

#include <gtest/gtest.h>

namespace vigil::init {
namespace {

// A mount table shaped like the one `vigil run` builds for a workspace /w with a denyRead
// directory /w/secret, a protected /w/.bashrc (existing), a placeholder /w/.mcp.json, a
// pinned /w/.git with read-only hooks, and a host tmpfs that is read-only.
constexpr const char* kMountinfo =
    "100 99 254:0 / / ro,nosuid,nodev,relatime - ext4 /dev/vda rw\n"
    "101 100 0:30 / /mnt/hosttmp ro,nosuid,nodev - tmpfs tmpfs rw\n"
    "102 100 0:5 / /dev rw,nosuid,nodev - tmpfs tmpfs rw\n"
    "103 102 0:6 /null /dev/null rw,nosuid - devtmpfs udev rw\n"
    "104 102 0:31 / /dev/shm rw,nosuid,nodev - tmpfs tmpfs rw\n"
    "105 100 254:0 /w /w rw,nosuid,nodev,relatime - ext4 /dev/vda rw\n"
    "106 105 0:32 / /w/secret rw,nosuid,nodev - tmpfs tmpfs rw\n"
    "107 105 254:0 /w/.bashrc /w/.bashrc ro,nosuid,nodev - ext4 /dev/vda rw\n"
    "108 105 0:6 /null /w/.mcp.json ro,nosuid - devtmpfs udev rw\n"
    "109 105 254:0 /w/.git /w/.git rw,nosuid,nodev - ext4 /dev/vda rw\n"
    "110 109 254:0 /w/.git/hooks /w/.git/hooks ro,nosuid,nodev - ext4 /dev/vda rw\n"
    "111 100 254:0 /tmp/vigil-0/abc/tmp /tmp/vigil-0/abc/tmp rw - ext4 /dev/vda rw\n"
    "112 105 254:0 /w/with\\040space /w/with\\040space ro - ext4 /dev/vda rw\n";

struct Row {
  const char* path;
  WriteVerdict verdict;
  const char* mount_point;
};

TEST(MountTable, ClassifiesWritesLikeTheKernel) {
  auto mounts = parse_mountinfo(kMountinfo);
  ASSERT_TRUE(mounts.ok()) << mounts.error().message;
  const Row rows[] = {
      {"/etc/passwd", WriteVerdict::kDenied, "/"},
      {"/home/u/x", WriteVerdict::kDenied, "/"},
      {"/mnt/hosttmp/x", WriteVerdict::kDenied, "/mnt/hosttmp"},  // ro beats tmpfs
      {"/w/src/main.c", WriteVerdict::kAllowed, "/w"},
      {"/w", WriteVerdict::kAllowed, "/w"},
      {"/wx/file", WriteVerdict::kDenied, "/"},  // "/w" is not a prefix of "/wx"
      {"/w/secret/key", WriteVerdict::kEphemeral, "/w/secret"},
      {"/w/.bashrc", WriteVerdict::kDenied, "/w/.bashrc"},
      {"/w/.mcp.json", WriteVerdict::kDenied, "/w/.mcp.json"},
      {"/w/.git/objects/ab", WriteVerdict::kAllowed, "/w/.git"},
      {"/w/.git/hooks/pre-commit", WriteVerdict::kDenied, "/w/.git/hooks"},
      {"/dev/shm/x", WriteVerdict::kAllowed, "/dev/shm"},  // bwrap's /dev is not ephemeral policy
      {"/dev/null", WriteVerdict::kAllowed, "/dev/null"},  // /dev/null itself (rw) is fine
      {"/dev/shm/../null", WriteVerdict::kAllowed, "/dev/null"},
      {"/tmp/vigil-0/abc/tmp/f", WriteVerdict::kAllowed, "/tmp/vigil-0/abc/tmp"},
      {"/tmp/other", WriteVerdict::kDenied, "/"},
      {"/w/with space/f", WriteVerdict::kDenied, "/w/with space"},  // unescaped \040
      {"/w/a/../.bashrc", WriteVerdict::kDenied, "/w/.bashrc"},     // normalised first
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.path);
    const Classified c = classify_write(*mounts, r.path);
    EXPECT_EQ(c.verdict, r.verdict) << to_string(c.verdict) << ": " << c.reason;
    EXPECT_EQ(c.mount_point, r.mount_point);
  }
}

TEST(MountTable, MalformedMountinfoIsAnError) {
  for (const char* bad : {"garbage\n", "1 2 3:4 / /x rw\n", "1 2 3:4 / /x rw shared:1 - ext4\n"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(parse_mountinfo(bad).ok());
  }
  EXPECT_TRUE(parse_mountinfo("").ok());
}

}  // namespace
}  // namespace vigil::init
