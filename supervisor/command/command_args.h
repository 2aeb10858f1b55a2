// What one command's sandbox is built from, besides the plan: the session's own paths as
// policy rules, which name of the log the sandbox gets read-only, which seccomp program
// vigil-init is sent, and vigil-init's options. Builders over the prepared plan; the
// launch itself is run_sandboxed()'s (sandboxed_command.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "filters/filter_specs.h"
#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/core/policy/policy.h"
#include "supervisor/launch/sandbox_plan.h"

namespace vigil {

// The plan's writable mounts, whose identity the launch check compares (launch_gate.h).
std::vector<std::string> writable_mounts(const Plan& plan);

// A path the session adds to its plan (the log, the log key), as a settings entry would
// (its kind looked up on disk).
PathRule session_rule(const std::string& resolved, const std::string& origin);

// Which of the log's names the sandbox gets read-only (log_guard.h, macOS's rule too);
// none when the sandbox cannot write anywhere near it.
std::optional<std::string> log_bind(const PreparedSandbox& prepared, const std::string& log_path);

// Which unix-socket table the policy asks for (filters/filter_specs.h). With an empty
// network.allowUnixSockets the broker still runs wherever the gatekeeper does: it refuses
// every unix socket, as the plain filter would, but with a `deny socket AF_UNIX` line, so
// the model hears of the refusal and of the key that lifts it (the plain filter's EPERM is
// silent). Kernels without the gatekeeper (< 5.14) keep the plain filter.
UnixSockets unix_sockets_mode(const NetworkPolicy& net, bool gatekeeper);

// vigil-init's seccomp program, on the wire: the same for every command of one unix-socket
// mode and one read mode (it depends on nothing else but this build), so a session compiles
// each once. With `reads` (vigil.observer.reads), the program that traps read-only opens too.
// With `capture` (vigil.network.capture), the program that traps connect() too.
Result<std::string> compiled_program(UnixSockets unix, bool reads, bool capture = false);

// The command's whole environment as a sealed memfd for vigil-init's --env-fd
// (supervisor/core/wire/env_block.h): `env` (none: this process's own) with each `set`
// entry (the proxy's variables, git's safe directories) in place, as bwrap's --setenv
// would have made it.
Result<UniqueFd> command_env_block(const std::optional<std::vector<std::string>>& env,
                                   const std::vector<std::pair<std::string, std::string>>& set);

// What vigil-init's options are made of: the descriptors the launch made, and what the
// other builders add for their part.
struct InitArgsInputs {
  const Policy* policy = nullptr;  // the settings' own (with the session's network lists)
  const Plan* plan = nullptr;      // with the session's additions
  int events_fd = -1;
  int program_fd = -1;
  int command_fd = -1;  // a spare's hand-off socket; -1: none
  int env_fd = -1;      // the command's environment (wire/env_block.h); -1: none
  int capture_fd = -1;  // the change store; -1: no capture
  // What is left of the store's caps for this command (vigil.capture.maxSessionBytes and
  // maxTotalBytes, less what the stores hold already).
  std::uint64_t capture_left = UINT64_MAX;
  std::vector<std::string> capture_skip;  // the sandbox's own trees: no pre-images
  std::string proxy_socket;
  // The command's own loopback address in an agent session's shared network namespace
  // (supervisor/launch/session_netns.h); "": 127.0.0.1 in a namespace of its own.
  std::string loopback;
  bool outer_proc = false;            // BwrapInputs::weaker_nested
  bool gatekeeper = false;            // gatekeeper_in_force()
  std::vector<std::string> external;  // external_bridges(): the user's own proxies
  std::vector<std::string> caps;      // CommandCaps::init_args()
  // vigil.network.capture: the proxy's capture listener, O_PATH (-1: not captured).
  int net_capture_fd = -1;
};

struct InitOptions {
  std::vector<std::string> args;  // BwrapInputs::init_args
  bool traps_reads = false;       // a --hide was given: send the program that traps reads
  bool captures = false;          // --net-capture-fd was given: the program traps connect()
};

// vigil-init's options for one command, through the table it parses them with
// (core/wire/init_args.h), then the launch builders' parts. Pure.
InitOptions vigil_init_options(const InitArgsInputs& in);

}  // namespace vigil
