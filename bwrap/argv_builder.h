// Policy plan -> bubblewrap argv. Pure: no I/O, no shell, no string splicing: every
// argument is its own token, and the whole argv reaches bwrap through `--args FD` (a
// memfd), so a path with spaces, quotes or newlines is just a path.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "supervisor/core/resolver.h"

namespace vigil {

// One logical bwrap option (a flag and its operands) and the rule that produced it, so
// `vigil explain` can print one mount per line with its reason.
struct BwrapArg {
  std::vector<std::string> tokens;
  std::string rule;
};

struct BwrapInputs {
  const Plan* plan = nullptr;
  std::string cwd;                                          // --chdir
  std::vector<std::pair<std::string, std::string>> setenv;  // --setenv NAME VALUE
  int json_status_fd = -1;                                  // --json-status-fd, when >= 0
  std::vector<std::string> command;                         // after "--"
  // vigil-init's path inside the sandbox: when set, it runs as PID 1 (--as-pid-1, no
  // bwrap init) and execs the command itself: "--" INIT "--" COMMAND...
  std::string init;
  std::vector<std::string> init_args;  // vigil-init's own options, before its "--"
  // Session files bound read-only at their own path after every policy mount, so no
  // denyRead can hide them (the proxy socket vigil-init bridges to).
  std::vector<std::string> late_ro_binds;
};

std::vector<BwrapArg> build_bwrap_args(const BwrapInputs& in);

// The flat token list (what bwrap sees after expanding --args).
std::vector<std::string> flatten(const std::vector<BwrapArg>& args);

// NUL-terminated tokens of every option, the format `bwrap --args FD` reads. bwrap takes
// only options from that fd: the "--" and the command (the last BwrapArg) stay on its
// real argv, still as separate tokens, never through a shell.
std::string serialize_options_for_args_fd(const std::vector<BwrapArg>& args);
std::vector<std::string> command_tokens(const std::vector<BwrapArg>& args);

}  // namespace vigil
