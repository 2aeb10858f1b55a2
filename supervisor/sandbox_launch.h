// Starts bwrap with its argv in a sealed memfd (`--args FD`), forwards SIGINT, SIGTERM,
// SIGHUP and SIGQUIT to the command, waits, and tells the command's own exit status
// (from bwrap's --json-status-fd) apart from a failure to build the sandbox.
// Not thread-safe: blocks signals process-wide while it runs.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "bwrap/argv_builder.h"
#include "supervisor/core/result.h"
#include "supervisor/core/unique_fd.h"

namespace vigil {

// The status pipe is made first, because its fd number is part of the argv.
struct StatusPipe {
  UniqueFd read;
  UniqueFd write;
};
Result<StatusPipe> make_status_pipe();

// The observer's event lines: vigil-init writes, we read (untrusted text).
struct EventPipe {
  UniqueFd read;
  UniqueFd write;
};
Result<EventPipe> make_event_pipe();

struct LaunchResult {
  int exit_code;  // the command's status: 0-255, 128+N for signal N
};

// `args` must carry --json-status-fd <status.write.get()>. Errc::kSystem when bwrap
// could not be started, Errc::kUnsupported when it exited before starting the command.
// `events`, when given, has its write end passed into the sandbox (for vigil-init's
// --events-fd); every line read from it goes to `on_event`, until it closes.
Result<LaunchResult> launch_bwrap(const std::string& bwrap_path, const std::vector<BwrapArg>& args,
                                  StatusPipe status, EventPipe* events,
                                  const std::function<void(std::string_view)>& on_event);

// Runs argv directly (for --sandbox off); same signal forwarding and exit mapping.
Result<LaunchResult> launch_unconfined(const std::vector<std::string>& argv);

}  // namespace vigil
