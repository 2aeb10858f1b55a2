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

#include "supervisor/core/base/result.h"
#include "supervisor/core/fs/path_verdict.h"  // Verdict

namespace vigil::init {

struct Mount {
  std::string mount_point;  // unescaped (mountinfo writes \040 for a space, ...)
  std::string root;         // the part of the source filesystem mounted there
  std::string fstype;
  std::string source;
  bool read_only = false;
  std::string dev;  // "major:minor" of the filesystem
};

// Parses mountinfo text; malformed lines are an error (it is the kernel's text).
Result<std::vector<Mount>> parse_mountinfo(std::string_view text);
Result<std::vector<Mount>> load_mount_table();

// The verdict of a write is one concept on both sides of the sandbox: the supervisor's
// plan (core/fs/path_verdict.h) and vigil-init's mount table give the same three, and
// fs.write carries it by one name (to_string(Verdict)).
using WriteVerdict = vigil::Verdict;

struct Classified {
  WriteVerdict verdict;
  std::string reason;
  std::string mount_point;  // of the mount that decided
};

// The mount a path lands on is the last one (mount order) whose mount point covers it.
// A read-only mount denies; /dev/null bound over a file denies (a protected file); a
// tmpfs that is not bwrap's /dev makes the write ephemeral (a denyRead directory).
Classified classify_write(const std::vector<Mount>& mounts, std::string_view path);


}  // namespace vigil::init
