// The spare's path through run_sandboxed() (spare_sandbox.h): a sandbox built without its
// command waits on a socketpair (observer/command_handoff.h) with /dev/null as its stdio;
// once the session hands it a command, what is the command's own is made then: its
// record, its capture store's name, the backstop's snapshot, its environment and stdio.
#pragma once

#include <sys/types.h>

#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/launch/sandbox_launch.h"
#include "supervisor/launch/sandbox_plan.h"
#include "supervisor/backstop/backstop.h"
#include "supervisor/backstop/change_capture.h"
#include "supervisor/command/spare_sandbox.h"

namespace vigil {

class CommandLogSink;
class CommandRecord;

// Whose command a sandbox runs: the request's, or, in a spare, the one handed over.
struct CommandOwner {
  std::string ignore_command;  // ignoreViolations' command line (ignore_command_line)
  std::array<int, 3> stdio = {0, 1, 2};
  std::string quarantine_id;
  const SpareCommand* handed = nullptr;  // a spare's, once handed one
};

class SpareHandoff {
 public:
  // The socketpair the command comes over, and /dev/null for the spare's stdio.
  static Result<SpareHandoff> open();

  // vigil-init's end (wire::InitArgs::command_fd).
  int command_fd() const { return theirs_.get(); }

  // A spare holds nothing of the session's until it is handed a command: /dev/null as
  // its stdio, an environment of bwrap's --setenv alone; vigil-init's end goes in.
  void prepare(LaunchIo& io);

  // What take_command() needs of the launch.
  struct Launched {
    SpareWait* wait = nullptr;
    PreparedSandbox built;    // the plan before the session's additions
    std::string session_tmp;  // its TMPDIR
    pid_t bwrap = -1;
    const PreparedSandbox* prepared = nullptr;  // with the session's additions
    // bwrap's --setenv: the proxy's variables first (`proxy_setenv` of them), which the
    // handed command's environment keeps.
    std::vector<std::pair<std::string, std::string>> setenv;
    std::size_t proxy_setenv = 0;
    bool capture_output = true;
  };

  // LaunchIo::before_wait: blocks until the session hands the spare a command (an error
  // when it was discarded, or the sandbox ended meanwhile: then nothing was recorded),
  // then opens the record through `sink` and sends the command to vigil-init.
  Result<void> take_command(Launched launched, std::optional<CaptureStore>& store,
                            BackstopSnapshot& snapshot, CommandLogSink& sink,
                            CommandRecord*& record, CommandOwner& owner);

 private:
  UniqueFd ours_, theirs_, dev_null_;
  std::vector<std::string> no_env_;
};

}  // namespace vigil
