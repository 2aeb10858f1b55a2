// Host mounts a sandbox carries along (bwrap binds / recursively) that are not the usual
// ones, and that hosts with chroots, containers or FUSE have: another root's /proc or
// /sys (a chroot's binds under a temp directory, a nested /proc), an overlay (Docker's
// overlay2 `merged` directories), FUSE (gvfs, sshfs), a snap's squashfs. Each is
// read-only in every sandbox; where bwrap cannot make one read-only (a mount locked in
// another user namespace), the launch check (launch_check.h) refuses the run and names
// it. `vigil probe` lists them, with that fix, before the first run. Pure.
#pragma once

#include <string>
#include <vector>

#include "observer/mount_table.h"

namespace vigil {

struct OddMount {
  std::string mount_point;
  std::string fstype;
  std::string what;  // why it is odd, for a person
};

// The odd mounts of a host table, in its order; the mounts below an odd one (a /sys
// bind's cgroup tree) are folded into it.
std::vector<OddMount> find_odd_mounts(const std::vector<init::Mount>& host);

// What vigil does with them, and the fix when a run refuses one.
inline constexpr const char* kOddMountFix =
    "read-only in every sandbox; if `vigil run` refuses one, add it to filesystem.denyRead "
    "(a tmpfs hides it) or unmount it";

}  // namespace vigil
