// The post-run backstop: once the command has ended (every sandbox process is dead, so
// nothing can race it) and before vigil returns, a bounded pass over the writable roots
// finds what the session left that breaks the rules, without trusting the observer:
//   - a protected name (supervisor/core/policy/mandatory_denies.h: .bashrc, .vscode/, .mcp.json,
//     .claude/commands, ... at any depth) made or changed during the session, or given that
//     name by a rename during the session (a rename marks everything the renamed directory
//     holds, whatever its age);
//   - a git directory as git decides it (supervisor/core/fs/git_dir.h: a symlinked HEAD,
//     objects or refs, a commondir), and, when it became one during the session (made,
//     renamed, or its objects/refs/commondir new), everything in it whatever its age;
//   - a git repository (a .git directory, a bare repository, .git/modules/*, a worktree's
//     gitdir, a directory renamed into .git) whose hooks directory gained an entry that
//     is not an inert *.sample, or whose config (config, config.worktree) gained a key
//     off the allowlist (supervisor/core/policy/git_safety.h);
//   - a .git FILE ("gitdir: ...") made during the session that points git at a repository
//     whose hooks or config run a program;
//   - a .gitmodules made or changed during the session with a key off the allowlist.
// Each is an Offender; quarantine.h moves them out.
//
// "During the session" is read from the inode: a change time (ctime, which no system call
// lets a process set) after the snapshot's start (see wait_for_coarse_clock()), or for a directory its birth time
// (statx btime; a directory's ctime also moves when an entry is added). What was on the
// host before the session is never an offender: an unsafe key already in a config at
// launch (the snapshot lists them for the repositories the mandatory scan found) stays.
//
// The walk is openat-based and never follows a symlink; it is bounded in entries and
// time, not depth. The session's fs.write records add the paths it wrote (checked even past
// the walk's bounds) and the names it renamed something into (a directory renamed into a
// protected name keeps its old birth time, so the record is what marks it).
//
// Thread-compatible; allocates; for the supervisor after the sandbox is gone.
#pragma once

#include <time.h>

#include <chrono>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "supervisor/backstop/backstop_types.h"
#include "supervisor/backstop/change_clock.h"

namespace vigil {

// Takes the start time, then judges each config in `configs` (absolute paths; a missing
// one is skipped). Call before the sandbox is spawned.
BackstopSnapshot take_backstop_snapshot(const std::vector<std::string>& configs);

// Waits (at most one clock tick, a few ms) until the coarse clock the kernel stamps most
// inode changes with has passed `snap.start`: from then on every change gets a ctime after
// it, while every change before the snapshot has one before it. Call after the snapshot
// and before the command can run (while bwrap sets the sandbox up). Returns at once for a
// floor stamp (ChangeStart::floor).
void wait_for_coarse_clock(const BackstopSnapshot& snap);

// The walk goes to any depth (a name past PATH_MAX included): bounded by the entries it
// looks at and by time, never by depth.
struct BackstopLimits {
  std::size_t max_entries = 500'000;
  std::chrono::milliseconds budget{5000};
};

struct BackstopFindings {
  std::vector<Offender> offenders;  // sorted by path; none lies inside another
  std::size_t entries = 0;          // directory entries looked at
  // Why the walk stopped short (an entry, depth or time bound, an unreadable directory);
  // "" when it covered everything.
  std::string incomplete;
};

BackstopFindings find_offenders(const BackstopInputs& in, const BackstopSnapshot& snap,
                                const BackstopLimits& limits = {});

}  // namespace vigil
