// The I/O around the launch check (supervisor/launch/launch_check.h): waits until bwrap has
// finished the sandbox's mount table, reads it and the host's, and judges. bwrap is then
// blocked on --block-fd, before it execs anything of the sandbox.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <span>

#include "supervisor/core/fs/expected_mounts.h"
#include "supervisor/core/base/result.h"
#include "supervisor/launch/launch_check.h"

namespace vigil {

// The plan's writable mounts as they are on the host now, just before bwrap mounts them.
// lstat: a path swapped for a symlink already is recorded as the link, which no mount
// can match.
Result<std::vector<ExpectedMount>> host_identities(std::span<const std::string> writable_paths);

// Reads /proc/`sandbox_pid`/mountinfo, after a change of that table once bwrap pauses
// asleep, until it is final (table_is_final), at most `budget`, then checks it against
// `planned` and `writable`.
// Errc::kRefused when the table breaks the plan; kSystem when it cannot be read (the
// sandbox already gone, no bwrap progress within the budget).
Result<void> check_sandbox_mounts(pid_t sandbox_pid, std::span<const PlannedMount> planned,
                                  std::span<const ExpectedMount> writable,
                                  std::chrono::milliseconds budget);

}  // namespace vigil
