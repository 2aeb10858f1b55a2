// The writable mounts a session's plan makes, as the supervisor found them on the host
// just before bwrap started, to compare with the mount table bwrap built
// (supervisor/launch/launch_check.h).
//
// Why: bwrap resolves each source and destination path when it mounts, following
// symlinks. A command of another session that shares the workspace can swap a directory
// the plan pins for a symlink between this session's scan and its mounts, and the pin's
// writable bind then lands on whatever the link names (a home directory, say). The
// identity (device, inode) recorded here, and the list itself, let the supervisor refuse
// such a sandbox before anything in it runs.
#pragma once

#include <cstdint>
#include <string>

namespace vigil {

struct ExpectedMount {
  std::string path;  // absolute, as bwrap's destination (the plan's resolved path)
  std::uint64_t dev = 0;
  std::uint64_t ino = 0;
  bool operator==(const ExpectedMount&) const = default;
};

}  // namespace vigil
