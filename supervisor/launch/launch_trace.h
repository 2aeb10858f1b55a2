// The debug trace of a launch (VIGIL_LOG=debug, `vigil -v`): the plan's mounts and bwrap's
// argv, one line each. The lines are built by pure functions (table-tested); trace_*()
// prints them through print_debug(), which escapes every path, and costs one branch when
// debug is off.
#pragma once

#include <string>
#include <vector>

#include "bwrap/argv_builder.h"
#include "supervisor/core/fs/path_verdict.h"

namespace vigil {

// "plan: N mounts", then "mount: KIND PATH (ORIGIN)" per op in mount order (a missing
// deny target: "... [placeholder]", one refused at the call: "... [at call, no mount]").
std::vector<std::string> plan_trace_lines(const Plan& plan);
// "bwrap: PATH --args FD (N options)", then "bwrap: TOKENS" per option group (its rule
// after " # " when it has one), then "bwrap: -- COMMAND...".
std::vector<std::string> bwrap_trace_lines(const std::string& bwrap_path,
                                           const std::vector<BwrapArg>& args);

void trace_plan(const Plan& plan);
void trace_bwrap_args(const std::string& bwrap_path, const std::vector<BwrapArg>& args);

}  // namespace vigil
