// A warm session's spare sandbox: bwrap + vigil-init started from the current plan ahead
// of the next command, through the launch check and with its seccomp program read,
// waiting on a socketpair for the command (observer/command_handoff.h). A request
// refreshes the plan as always; the spare takes the command only when the fresh plan
// would build exactly the sandbox it is (spare_mismatch() below), else it is discarded
// and the command launched as without one. Its start then leaves the command's path.
//
// What is the command's own is made at hand-off (its id, command.start, the backstop's
// snapshot, its environment and stdio, its capture store's name); what the spare made
// for it (session directory and TMPDIR, cgroups, proxy listener) is that command's alone:
// one spare serves one command. A spare never handed a command writes no record.
#pragma once

#include <sys/types.h>
#include <time.h>

#include <array>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "supervisor/core/base/result.h"
#include "supervisor/core/fs/expected_mounts.h"
#include "supervisor/launch/sandbox_launch.h"
#include "supervisor/launch/sandbox_plan.h"
#include "supervisor/backstop/change_capture.h"
#include "supervisor/backstop/change_clock.h"

namespace vigil {

class CommandLogSink;

// What a spare was built from, as it waits.
struct SpareShape {
  PreparedSandbox prepared;  // its policy carries the session's network lists
  std::string session_tmp;   // the TMPDIR its plan holds (a fresh plan is made with it)
  // lstat of every path the plan mounts that existed (spare_identity_paths): a
  // workspace removed and made again has the same plan but not the same directory.
  std::vector<ExpectedMount> identities;
};

// The paths whose identity a spare depends on: every op's path that exists.
std::vector<std::string> spare_identity_paths(const Plan& plan);

// Pure. "" when a fresh prepare (its policy given the session's network lists, its
// identities taken now) builds the sandbox `spare` is; else what differs, in a few
// words. Every field of the policy, the plan and the protected names counts.
std::string spare_mismatch(const SpareShape& spare, const PreparedSandbox& fresh,
                           std::span<const ExpectedMount> identities_now);

// Pure: the command's whole environment, as bwrap would have made it: `base` (or, with
// none, `inherited`) with each `set` entry replacing a same-named one or added at the end.
std::vector<std::string> handed_environment(
    const std::optional<std::vector<std::string>>& base, const std::vector<std::string>& inherited,
    const std::vector<std::pair<std::string, std::string>>& set);

// A spare's capture store (opened under a name of its own) takes the command's name.
Result<void> rename_capture_store(CaptureStore& store, const std::string& id);

// The command a spare is handed.
struct SpareCommand {
  std::vector<std::string> command;
  std::optional<std::vector<std::string>> env;  // none: the supervisor's
  std::array<int, 3> stdio = {0, 1, 2};         // 1 and 2 only when not capturing
  std::string quarantine_id;
  std::function<void(pid_t bwrap)> on_spawned;
  // The backstop's "during the session" start, taken when the request came (before
  // its plan was refreshed), as a launch takes it before bwrap starts.
  ChangeStart backstop_start;
};

// The session's side of a spare's wait (run_sandboxed with SandboxedCommand::spare).
class SpareWait {
 public:
  virtual ~SpareWait() = default;
  // The sandbox is up and waiting: `shape` is what it was built from. Blocks until the
  // session hands it a command (valid until run_sandboxed returns) or discards it (null).
  virtual const SpareCommand* wait(SpareShape shape) = 0;
};

}  // namespace vigil
