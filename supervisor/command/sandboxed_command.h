// One command in its own sandbox (bwrap + vigil-init + its own proxy listener), whatever
// orchestrates it: `vigil run` (run_session: one command, one log of its own) and a
// session of many commands (`vigil session`, `vigil serve`, `vigil mcp`: one log for all,
// each command's records framed and tagged with its id). The orchestrator says where the
// records go (CommandLogSink) and ends the record itself (session.end or command.end).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "supervisor/command/command_types.h"
#include "supervisor/core/base/result.h"
#include "supervisor/launch/sandbox_plan.h"

namespace vigil {

// The plan request run_sandboxed() makes for `cmd` with its TMPDIR (before_scan unset):
// a spare's hand-off refreshes the plan with exactly this.
PlanRequest command_plan_request(const SandboxedCommand& cmd, const std::string& session_tmp);

// Loads the policy, refreshes the plan for `cmd.cwd`, launches, streams the events into
// the record and the output to `on_output` (and into the record), and appends the block
// to stderr as `vigil run` always has. The record stays open: the caller ends it. An
// error before the record was opened means nothing ran.
Result<SandboxedOutcome> run_sandboxed(const SandboxedCommand& cmd, CommandLogSink& sink,
                                       const std::function<bool(OutputStream, std::string_view)>&
                                           on_output);

}  // namespace vigil
