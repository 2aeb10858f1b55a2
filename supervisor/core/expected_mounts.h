// The writable mounts a session's plan makes, as the supervisor found them on the host
// just before bwrap started, for vigil-init to compare with the mount table bwrap built.
//
// Why: bwrap resolves each source and destination path when it mounts, following
// symlinks. A command of another session that shares the workspace can swap a directory
// the plan pins for a symlink between this session's scan and its mounts, and the pin's
// writable bind then lands on whatever the link names (a home directory, say). The
// identity (device, inode) recorded here, and the list itself, let vigil-init refuse
// such a sandbox before the command runs.
//
// Wire format (a memfd handed to vigil-init): per mount, the path, the device and the
// inode in decimal, each NUL-terminated. Paths cannot hold a NUL; any other byte is
// kept as is. Pure.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "supervisor/core/result.h"

namespace vigil {

struct ExpectedMount {
  std::string path;  // absolute, as bwrap's destination (the plan's resolved path)
  std::uint64_t dev = 0;
  std::uint64_t ino = 0;
  bool operator==(const ExpectedMount&) const = default;
};

std::string encode_expected_mounts(std::span<const ExpectedMount> mounts);

// Errors (kInternal): a truncated record, a relative or empty path, a number that is not
// plain decimal or overflows.
Result<std::vector<ExpectedMount>> decode_expected_mounts(std::string_view wire);

}  // namespace vigil
