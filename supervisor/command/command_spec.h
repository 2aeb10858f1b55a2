// The one builder of a SandboxedCommand (sandboxed_command.h), for every caller: `vigil
// run` (session_orchestrator.cc), an agent session's command (agent_session.cc) and its
// spare (agent_session_spare.cc). What the session fixes for all its commands and what
// one command brings are separate inputs, so a spare and the command it is handed are
// built from the same session inputs and cannot drift apart field by field.
#pragma once

#include <sys/types.h>

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "supervisor/core/policy/cap_plan.h"
#include "supervisor/core/policy/policy.h"
#include "supervisor/command/proxy_test_options.h"
#include "supervisor/command/sandboxed_command.h"
#include "supervisor/command/session_proxy.h"

namespace vigil {

// What a session (or `vigil run`'s one command) fixes for every command it runs.
struct SessionInputs {
  std::optional<std::string> settings;  // none: the embedded default
  bool allow_writable_settings = false;
  ProxyTestHooks proxy_test;
  // The machine's resource-cap facts, probed once by a session; none: per command.
  std::optional<HostLimits> host_limits;
  // The allowlist as the session has it now (policy.update); none: the settings' own.
  std::optional<NetworkPolicy> net;
  // An agent session's network namespace, joined by each of its commands (null: each
  // command has its own; SandboxedCommand::netns).
  std::shared_ptr<SessionNetns> netns;
};

// What one command brings.
struct CommandInputs {
  std::vector<std::string> argv;
  std::string cwd;  // absolute: where the command starts
  // The workspace (the plan's default writable root, what relative settings paths are
  // resolved against): an agent session's, fixed when it started. Empty: `cwd`.
  std::string workspace;
  std::optional<std::vector<std::string>> env;
  std::array<int, 3> stdio = {0, 1, 2};
  bool capture_output = true;
  bool annotate_stderr = true;
  bool violations_json = true;
  std::optional<double> timeout_s;
  std::string quarantine_id;
  std::function<void(pid_t bwrap)> on_spawned;
  ProxyAsk ask;  // ask mode: who is asked about this command's requests (none: nobody)
};

// Every field of the command from its two inputs. Pure. What the launch wires itself
// (interrupted_fd, merge_output, spare) is left at its default.
SandboxedCommand sandboxed_command(const SessionInputs& session, CommandInputs command);

}  // namespace vigil
