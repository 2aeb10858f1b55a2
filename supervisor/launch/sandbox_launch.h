// Starts bwrap with its argv in a sealed memfd (`--args FD`), forwards SIGINT, SIGTERM,
// SIGHUP and SIGQUIT to the command, waits, and tells the command's own exit status
// (from bwrap's --json-status-fd) apart from a failure to build the sandbox.
// Blocks the forwarded signals and SIGCHLD in the calling thread while it runs.
#pragma once

#include <sys/types.h>

#include <array>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "bwrap/argv_builder.h"
#include "supervisor/core/base/pipe.h"
#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/launch/launch_io.h"
#include "supervisor/launch/launch_pipes.h"  // the pipes a caller makes for LaunchIo

namespace vigil {

// True when this process's fds `a` and `b` are one open file description (as after
// 2>&1): kcmp(KCMP_FILE), or where that is not allowed the same file, offset-sharing
// flags and all.
bool same_open_file(int a, int b);

// `args` must carry --json-status-fd <status.write.get()>. Errc::kSystem when bwrap
// could not be started, Errc::kUnsupported when it exited before starting the command.
Result<LaunchResult> launch_bwrap(const std::string& bwrap_path, const std::vector<BwrapArg>& args,
                                  Pipe status, LaunchIo& io);

// Runs argv directly (for --sandbox off); same signal forwarding and exit mapping.
Result<LaunchResult> launch_unconfined(const std::vector<std::string>& argv);

}  // namespace vigil
