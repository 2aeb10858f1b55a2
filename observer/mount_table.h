// The sandbox's mount table, read by vigil-init from /proc/self/mountinfo after bwrap
// built it, and the verdict it gives a write: the observer judges a write by what the
// kernel will do (the mount it lands on), never by a second reading of the policy.
// Pure except load_mount_table().
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "supervisor/core/expected_mounts.h"
#include "supervisor/core/result.h"

namespace vigil::init {

struct Mount {
  std::string mount_point;  // unescaped (mountinfo writes \040 for a space, ...)
  std::string root;         // the part of the source filesystem mounted there
  std::string fstype;
  std::string source;
  bool read_only = false;
};

// Parses mountinfo text; malformed lines are an error (it is the kernel's text).
Result<std::vector<Mount>> parse_mountinfo(std::string_view text);
Result<std::vector<Mount>> load_mount_table();

enum class WriteVerdict { kAllowed, kDenied, kEphemeral };

struct Classified {
  WriteVerdict verdict;
  std::string reason;
  std::string mount_point;  // of the mount that decided
};

// The mount a path lands on is the last one (mount order) whose mount point covers it.
// A read-only mount denies; /dev/null bound over a file denies (a protected file); a
// tmpfs that is not bwrap's /dev makes the write ephemeral (a denyRead directory).
Classified classify_write(const std::vector<Mount>& mounts, std::string_view path);

const char* to_string(WriteVerdict v);

// (device, inode) of a path without following its last component, or nullopt.
using IdentityOf =
    std::function<std::optional<std::pair<std::uint64_t, std::uint64_t>>(const std::string&)>;

// Checks the table bwrap built against the writable mounts the plan made (see
// supervisor/core/expected_mounts.h): each planned one must be a mount point holding the
// directory the supervisor saw, and no writable mount of a real filesystem may sit
// outside them (a bind that followed a swapped-in symlink lands there). Mounts of
// bwrap's own (tmpfs, devtmpfs, proc, devpts, mqueue) and read-only ones give no write
// outside the plan and are not checked. Pure but for `identity`.
Result<void> check_writable_mounts(const std::vector<Mount>& table,
                                   std::span<const ExpectedMount> expected,
                                   const IdentityOf& identity);

}  // namespace vigil::init
