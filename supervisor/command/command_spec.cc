#include "supervisor/command/command_spec.h"

#include <utility>

namespace vigil {

SandboxedCommand sandboxed_command(const SessionInputs& session, CommandInputs command) {
  SandboxedCommand cmd;
  cmd.settings = session.settings;
  cmd.allow_writable_settings = session.allow_writable_settings;
  cmd.proxy_test = session.proxy_test;
  cmd.host_limits = session.host_limits;
  cmd.net = session.net;
  cmd.netns = session.netns;
  cmd.command = std::move(command.argv);
  cmd.cwd = std::move(command.cwd);
  cmd.workspace = std::move(command.workspace);
  cmd.env = std::move(command.env);
  cmd.stdio = command.stdio;
  cmd.capture_output = command.capture_output;
  cmd.annotate_stderr = command.annotate_stderr;
  cmd.violations_json = command.violations_json;
  cmd.timeout_s = command.timeout_s;
  cmd.quarantine_id = std::move(command.quarantine_id);
  cmd.on_spawned = std::move(command.on_spawned);
  cmd.ask = std::move(command.ask);
  return cmd;
}

}  // namespace vigil
