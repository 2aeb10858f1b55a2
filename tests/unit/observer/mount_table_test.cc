// The observer's verdicts come from the sandbox's mount table: a table of mountinfo
// snippets (as bwrap builds them) and paths, each with the verdict the kernel would give.
#include "observer/mount_table.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>

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

// check_writable_mounts against kMountinfo: the planned writable mounts are /w, /w/.git
// and the session temp dir, with the identities the supervisor recorded.
namespace checks {

const std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> kIds = {
    {"/w", {1, 10}}, {"/w/.git", {1, 11}}, {"/tmp/vigil-0/abc/tmp", {1, 12}}, {"/evil", {1, 99}}};

std::optional<std::pair<std::uint64_t, std::uint64_t>> identity(const std::string& p) {
  auto it = kIds.find(p);
  if (it == kIds.end()) return std::nullopt;
  return it->second;
}

std::vector<ExpectedMount> planned() {
  return {{"/w", 1, 10}, {"/w/.git", 1, 11}, {"/tmp/vigil-0/abc/tmp", 1, 12}};
}

struct CheckRow {
  const char* what;
  std::string extra_line;             // appended to kMountinfo
  std::vector<ExpectedMount> expect;  // the supervisor's list
  bool ok;
  const char* names;  // a path the error must name
};

TEST(MountTable, WritableMountsMustBeThePlannedOnes) {
  std::vector<ExpectedMount> wrong_ino = planned();
  wrong_ino[1].ino = 42;
  std::vector<ExpectedMount> missing = planned();
  missing.push_back({"/w/gone", 1, 13});
  const CheckRow rows[] = {
      {"as planned", "", planned(), true, ""},
      {"a host submount inside a writable root, carried by the recursive bind",
       "120 105 0:40 / /w/build rw - ext4 /dev/vdb rw\n", planned(), true, ""},
      {"bwrap's own tmpfs and device nodes are not binds of the plan",
       "121 102 0:6 /zero /dev/zero rw - devtmpfs udev rw\n", planned(), true, ""},
      {"read-only mounts give no write", "122 100 254:0 /etc /etc ro - ext4 /dev/vda rw\n",
       planned(), true, ""},
      {"a pin's bind that followed a swapped-in symlink to a directory outside",
       "123 100 254:0 /home/u /home/u rw - ext4 /dev/vda rw\n", planned(), false, "/home/u"},
      {"the same on another filesystem type", "124 100 0:50 / /evil rw - xfs /dev/vdc rw\n",
       planned(), false, "/evil"},
      {"a planned mount point holds another directory (its source was swapped)", "", wrong_ino,
       false, "/w/.git"},
      {"a planned mount is not there (its destination was swapped)", "", missing, false, "/w/gone"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    auto mounts = parse_mountinfo(std::string(kMountinfo) + row.extra_line);
    ASSERT_TRUE(mounts.ok()) << mounts.error().message;
    const auto r = check_writable_mounts(*mounts, row.expect, identity);
    EXPECT_EQ(r.ok(), row.ok);
    if (!r.ok()) {
      EXPECT_NE(r.error().message.find(row.names), std::string::npos) << r.error().message;
    }
  }
}

}  // namespace checks

}  // namespace
}  // namespace vigil::init
