// The worker: what vigil-init's child does between fork and exec. Sets no_new_privs,
// installs the seccomp filters (compiled before the fork), and execs the command.
// Async-signal-safe after fork: no allocation, no locks, no exceptions.
#pragma once

#include <linux/filter.h>

#include <sys/resource.h>

#include <span>

namespace vigil::init {

struct WorkerSpec {
  char* const* argv = nullptr;          // the command, NULL-terminated
  std::span<const sock_fprog> filters;  // installed in this order
  // The observer's filter, installed last with a new listener, whose fd is passed to
  // vigil-init over `listener_channel` (a socketpair end) before the command runs: the
  // exec itself is the first trapped call, so the observer must be holding it by then.
  const sock_fprog* notify = nullptr;
  unsigned notify_flags = 0;  // e.g. SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
  int listener_channel = -1;
  // Resource caps (vigil.limits, supervisor/core/policy/cap_plan.h) set on the command alone,
  // first: vigil-init's own work (the observer, emulated writes) is not capped by them.
  struct Rlimit {
    int resource = -1;
    rlim_t value = 0;
  };
  std::span<const Rlimit> rlimits;
};

// Never returns on success. On failure prints one line to stderr and returns the exit
// status: 127 command not found, 126 not executable, 125 sandbox setup failed.
int run_worker(const WorkerSpec& spec);

}  // namespace vigil::init
