// The wait of a launch: until the command's process ends, signals are forwarded to it
// (signal_relay.h), bwrap's status lines, the observer's event lines and the command's
// output are passed on as they arrive, the wall-clock and resource caps are enforced,
// and every pipe is read to its end after the exit.
#pragma once

#include <sys/types.h>

#include <string>

#include "supervisor/core/base/result.h"
#include "supervisor/launch/bwrap_status.h"
#include "supervisor/launch/launch_pipes.h"
#include "supervisor/launch/launch_io.h"

namespace vigil {

// The pipes one wait loop serves (closed ones are skipped: --sandbox off has none).
struct LaunchPipes {
  PipeReader status;
  PipeReader events;
  PipeReader out;
  PipeReader err;
};

struct WaitOutcome {
  int status = 0;     // waitpid's, of the child waited for
  BwrapStatus bwrap;  // what bwrap's status lines said
  std::string limit;  // LaunchResult::limit
};

// Waits for `child`, forwarding signals. bwrap's status lines give the sandbox's init
// (signals go there) and the command's exit code; event lines and output chunks are
// passed on as they arrive, and to the end of their pipes after the exit. Without a
// status pipe the child is the command itself.
Result<WaitOutcome> wait_forwarding(pid_t child, LaunchPipes& p, const LaunchIo& io);

// The sandbox's pid, from bwrap's first status line (written before it lets the sandbox
// build its mounts); -1 when bwrap ended without one. The lines stay in the buffer for
// the wait.
Result<pid_t> await_sandbox_pid(PipeReader& status);

}  // namespace vigil
