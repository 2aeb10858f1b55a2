// Ending a sandbox at any stage of bubblewrap's start, so that nothing of it outlives the
// kill.
//
// bwrap (the launcher, vigil's child) clones the sandbox's first process and sets up its
// uid map; that child waits for the go-ahead on an eventfd, and much later, after its
// setsid(), sets its own --die-with-parent (bubblewrap.c: the read of child_wait_fd, then
// setsid(), then handle_die_with_parent() in the child). A bwrap killed alone before that
// last step left its child behind: waiting for ever on the eventfd, or running the
// sandbox with nobody to end it (seen: spare sandboxes of ended sessions, ppid 1, holding
// their fds and counting against the user's process cap; SandboxKill.* reproduces both).
// So bwrap is stopped first (it can clone no more), every child it has is killed by pid,
// then its process group and bwrap itself.
#pragma once

#include <sys/types.h>

#include <vector>

namespace vigil {

// The children of the single-threaded process `pid` (/proc/PID/task/PID/children), in the
// kernel's order: for a bwrap, the sandbox's first process. Empty when there are none.
std::vector<pid_t> children_of(pid_t pid);

// SIGKILL to `sandbox` (the sandbox's PID 1 as bwrap reported it; <= 0 when not known),
// to every child of `bwrap`, to bwrap's process group and to bwrap; then waits (up to 1 s)
// until the sandbox's PID 1 and bwrap's children have exited, so that a caller that goes
// on to report or exit leaves nothing of them visible. `bwrap` must not have been reaped
// yet (the caller reaps it).
void kill_sandbox_tree(pid_t bwrap, pid_t sandbox = -1);

}  // namespace vigil
