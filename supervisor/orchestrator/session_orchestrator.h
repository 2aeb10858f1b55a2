// One `vigil run` session, whatever the platform: the steps every session takes in the
// same order (the command checked, the workspace, the session id, the log from
// session.start to session.end, the old logs pruned) live here once; what confines the
// command is a backend's, both in this folder: bwrap and vigil-init on Linux
// (bwrap_backend.cc, over run_sandboxed()), Seatbelt on macOS (seatbelt_backend.cc). Both
// backends protect the log with log_guard() and end with deliver_block().
#pragma once

#include <string_view>

#include "supervisor/command/sandboxed_command.h"
#include "supervisor/orchestrator/session_runner.h"

namespace vigil {

class SessionBackend {
 public:
  virtual ~SessionBackend() = default;
  // session.start's "sandbox": "bwrap", "seatbelt".
  virtual std::string_view name() const = 0;
  // Plans, launches and witnesses `cmd`; its records go through `sink` (which the
  // backend opens, once the log is protected) and its block to stderr. An error before
  // the sink was opened means nothing ran.
  virtual Result<SandboxedOutcome> run(SandboxedCommand& cmd, CommandLogSink& sink,
                                       const SessionCallbacks& callbacks) = 0;
};

// run_session() on every platform: the request checked and turned into a command, the
// backend run, the log ended (session.end with the exit code and any limit) and pruned
// to vigil.log.keep.
Result<SessionOutcome> orchestrate_session(const SessionRequest& request,
                                           const SessionCallbacks& callbacks,
                                           SessionBackend& backend);

}  // namespace vigil
