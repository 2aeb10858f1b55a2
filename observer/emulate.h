// The I/O half of the gatekeeper: performs a planned call (observer/call_plan.h) from
// the caller's view, never vigil-init's. The cwd is /proc/PID/cwd, a dirfd is fetched
// with pidfd_getfd, the umask is /proc/PID/status's, and /proc/self, /proc/thread-self,
// /proc/<caller>/fd/N and /dev/fd/N mean the caller's own entries (call_plan's
// route_magic). Every other name is resolved with RESOLVE_NO_MAGICLINKS: no magic link
// is followed in vigil-init's view. vigil-init runs with umask 0 and applies the
// caller's, since its own would otherwise be applied on top.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <string_view>

#include "observer/call_plan.h"
#include "observer/caller_names.h"
#include "observer/cwd_cache.h"
#include "observer/emulate_types.h"
#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil::init {

// After an install that failed (`done->error` set, the caller still waiting): takes back
// what the call made that the caller will never see (a file an open created).
void take_back(Performed* done);

// Performs `plan` (kind kPerform) for caller `pid`. With may_block false an open that
// would wait for a FIFO's peer comes back would_block instead of waiting. `cwds`: the
// notify loop's cache of callers' cwds (nullptr: /proc/PID/cwd is opened for this call).
Performed perform(const CallPlan& plan, pid_t pid, bool may_block = false,
                  const Gate* gate = nullptr, CwdCache* cwds = nullptr, const Keep* keep = nullptr);

}  // namespace vigil::init
