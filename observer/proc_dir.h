// Where vigil-init finds a process of its own pid namespace in /proc. Normally the
// sandbox has a fresh /proc of that namespace, and it is "/proc/<pid>". Under
// enableWeakerNestedSandbox the container refuses a fresh /proc and the sandbox keeps the
// container's, whose numbers are those of the container's namespace: there pid 7 of the
// sandbox is some other number, and /proc/7 another process. Every /proc path vigil-init
// builds for a caller goes through here, so a caller's cwd, fds and exe are its own.
#pragma once

#include <sys/types.h>

#include <string>

#include "supervisor/core/base/unique_fd.h"

namespace vigil::init {

// Set once, before the worker starts (vigil-init --outer-proc).
void set_outer_proc(bool on);
bool outer_proc();

// "/proc/<pid as /proc numbers it>". With the outer /proc: translated through a pidfd
// (its fdinfo's "Pid:" line counts in the namespace of the /proc it is read through);
// when that fails (the process is gone), "/proc/0/gone", which names nothing, so every
// use fails closed (ENOENT) instead of reaching another process.
std::string proc_dir(pid_t pid);

// A pidfd for the task that made a trapped call. A notification's pid is that task's
// thread id, and pidfd_open refuses a thread that does not lead its group unless it is
// asked for the thread itself (PIDFD_THREAD, Linux 6.9): without it a worker thread's
// dirfd or socket could not be fetched, and its call was refused as if the process were
// not dumpable (rustc's threads hit it on every fresh cargo build). The thread's own
// pidfd also fetches from the thread's own fd table, whatever it unshared. Before 6.9
// only a group leader gets one; a thread's call then fails closed, as before.
UniqueFd task_pidfd(pid_t tid);

// The pidfd fdinfo text's "Pid:" value, or -1. Pure (for the table test).
long pid_from_fdinfo(const std::string& fdinfo);

}  // namespace vigil::init
