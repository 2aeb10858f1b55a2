// The sandbox's one seccomp program.
//
// `vigil run` compiles it while bwrap is still building the sandbox, so that libseccomp's
// ~1 ms is off the command's start path, and hands it to vigil-init over a pipe
// (filters/program_wire.h). Its arrival is also vigil-init's go: the command starts only
// once the supervisor has its session log and proxy ready, and never when the pipe closes
// without a whole program (the supervisor failed, or died).
#pragma once

#include <linux/filter.h>

#include <vector>

#include "filters/filter_specs.h"
#include "filters/program_wire.h"
#include "supervisor/core/base/result.h"

namespace vigil {

// The worker's tables (worker_filters()) and, when `observe`, the observer's
// (notify_filter(reads)), combined into one program (compile_combined). `unix` picks the
// unix-socket table (filter_specs.h); kBrokered needs `observe`. `reads`
// (vigil.observer.reads) makes the observer's table trap read-only opens too. `capture`
// (vigil.network.capture) traps connect() (net_capture_filter(); needs `observe`).
Result<std::vector<sock_filter>> sandbox_program(bool observe,
                                                 UnixSockets unix = UnixSockets::kBlocked,
                                                 bool reads = false, bool capture = false);

}  // namespace vigil
