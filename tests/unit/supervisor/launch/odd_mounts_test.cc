// Which host mounts `vigil probe` lists as odd (supervisor/launch/odd_mounts.h).
#include "supervisor/launch/odd_mounts.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

TEST(OddMounts, ListsOtherRootsOverlaysFuseAndSnapsOnce) {
  auto host = init::parse_mountinfo(
      "1 0 254:0 / / rw - ext4 /dev/vda rw\n"
      "2 1 0:21 / /proc rw - proc proc rw\n"
      "3 1 0:22 / /sys rw - sysfs sysfs rw\n"
      "4 3 0:28 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
      "5 1 0:30 / /tmp rw - tmpfs tmpfs rw\n"
      "6 5 0:22 / /tmp/chroot/sys rw - sysfs sysfs rw\n"
      "7 6 0:28 / /tmp/chroot/sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
      "8 5 0:21 / /tmp/chroot/proc rw - proc proc rw\n"
      "9 2 0:40 / /proc/sys/fs/binfmt_misc rw - binfmt_misc binfmt_misc rw\n"
      "10 1 0:41 / /var/lib/docker/overlay2/abc/merged rw - overlay overlay rw\n"
      "11 1 0:42 / /run/user/1000/gvfs rw - fuse.gvfsd-fuse gvfsd-fuse rw\n"
      "12 1 7:3 / /snap/core/1 ro - squashfs /dev/loop3 ro\n"
      "13 1 0:43 / /mnt/nested/proc rw - proc proc rw\n");
  ASSERT_TRUE(host.ok()) << host.error().message;
  const auto odd = find_odd_mounts(*host);
  const std::vector<std::pair<std::string, std::string>> want = {
      {"/tmp/chroot/sys", "sysfs"},
      {"/tmp/chroot/proc", "proc"},
      {"/var/lib/docker/overlay2/abc/merged", "overlay"},
      {"/run/user/1000/gvfs", "fuse.gvfsd-fuse"},
      {"/snap/core/1", "squashfs"},
      {"/mnt/nested/proc", "proc"},
  };
  ASSERT_EQ(odd.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(odd[i].mount_point, want[i].first);
    EXPECT_EQ(odd[i].fstype, want[i].second);
    EXPECT_FALSE(odd[i].what.empty());
  }
  // The host's own /proc, /sys and tmpfs are not odd.
  auto plain = init::parse_mountinfo(
      "1 0 254:0 / / rw - ext4 /dev/vda rw\n2 1 0:21 / /proc rw - proc proc rw\n"
      "3 1 0:22 / /sys rw - sysfs sysfs rw\n4 1 0:30 / /tmp rw - tmpfs tmpfs rw\n");
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(find_odd_mounts(*plain).empty());
}

// doctor's trial: an odd mount read-only in the trial sandbox, another left writable (a
// submount bwrap could not reach), a plain host mount left writable (listed too), and
// bwrap's own /dev and /proc, which are not the host's business.
TEST(OddMounts, JudgedInATrialSandbox) {
  auto host = init::parse_mountinfo(
      "1 0 254:0 / / rw - ext4 /dev/vda rw\n"
      "2 1 0:21 / /proc rw - proc proc rw\n"
      "5 1 0:30 / /tmp rw - tmpfs tmpfs rw\n"
      "6 5 0:22 / /tmp/a/sys rw - sysfs sysfs rw\n"
      "7 5 0:22 / /tmp/b/sys rw - sysfs sysfs rw\n"
      "8 7 0:28 / /tmp/b/sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
      "9 5 0:44 / /tmp/c/locked rw - ext4 /dev/vdb rw\n"
      "11 5 0:46 / /tmp/d/scratch rw - tmpfs tmpfs rw\n"
      "10 1 0:45 / /mnt/untried/proc rw - proc proc rw\n");
  auto trial = init::parse_mountinfo(
      "21 20 254:0 / / ro - ext4 /dev/vda rw\n"
      "22 21 0:30 / /tmp ro - tmpfs tmpfs rw\n"
      "23 22 0:22 / /tmp/a/sys ro - sysfs sysfs rw\n"
      "24 22 0:22 / /tmp/b/sys ro - sysfs sysfs rw\n"
      "25 24 0:28 / /tmp/b/sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
      "26 22 0:44 / /tmp/c/locked rw - ext4 /dev/vdb rw\n"
      "29 22 0:46 / /tmp/d/scratch rw - tmpfs tmpfs rw\n"
      "27 21 0:50 / /dev rw - tmpfs tmpfs rw\n"
      "28 21 0:51 / /proc rw - proc proc rw\n");
  ASSERT_TRUE(host.ok() && trial.ok());
  auto odd = find_odd_mounts(*host);
  judge_in_trial(*host, *trial, &odd);
  using T = OddMount::Trial;
  const std::vector<std::pair<std::string, T>> want = {{"/tmp/a/sys", T::kReadOnly},
                                                       {"/tmp/b/sys", T::kWritable},
                                                       {"/mnt/untried/proc", T::kNotTried},
                                                       {"/tmp/c/locked", T::kWritable}};
  ASSERT_EQ(odd.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(want[i].first);
    EXPECT_EQ(odd[i].mount_point, want[i].first);
    EXPECT_EQ(odd[i].trial, want[i].second);
  }
  EXPECT_EQ(writable_mount_fix("/tmp/b/sys"),
            "bwrap left it writable in a trial sandbox, so `vigil run` refuses to start while it "
            "is mounted: add \"/tmp/b/sys\" to filesystem.denyRead (a tmpfs hides it), or "
            "unmount it (sudo umount -R /tmp/b/sys)");
}

}  // namespace
}  // namespace vigil
