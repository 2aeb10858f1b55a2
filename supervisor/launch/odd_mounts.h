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
  // What `vigil doctor`'s trial sandbox (bwrap binding / read-only, as `vigil run` does,
  // with this user's privileges) made of it: not tried (no bwrap), read-only, or left
  // writable, which makes the launch check refuse every run (launch_check.h).
  enum class Trial { kNotTried, kReadOnly, kWritable };
  Trial trial = Trial::kNotTried;
};

// The odd mounts of a host table, in its order; the mounts below an odd one (a /sys
// bind's cgroup tree) are folded into it.
std::vector<OddMount> find_odd_mounts(const std::vector<init::Mount>& host);

// The trial: `trial` is the mount table of a sandbox bwrap made with --ro-bind / / (read
// from inside it). Marks each odd mount read-only or writable there, and adds every other
// host mount the trial left writable (bwrap skips a submount it cannot reach, e.g. one
// below a directory this user may not enter), but bwrap's own /dev and /proc. A trial
// table that lacks an odd mount leaves it kNotTried. Pure.
void judge_in_trial(const std::vector<init::Mount>& host, const std::vector<init::Mount>& trial,
                    std::vector<OddMount>* odd);

// Filesystems whose writable mounts give no write to a host file outside the plan: the
// launch check lets them be (launch_check.cc, kernel_or_scratch), so the trial does too.
bool harmless_when_writable(std::string_view fstype);

// The fix for a mount the trial left writable: a denyRead hides it, or unmount it.
std::string writable_mount_fix(const std::string& mount_point);

// What vigil does with them, and the fix when a run refuses one.
inline constexpr const char* kOddMountFix =
    "read-only in every sandbox; if `vigil run` refuses one, add it to filesystem.denyRead "
    "(a tmpfs hides it) or unmount it";

}  // namespace vigil
