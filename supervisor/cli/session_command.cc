// `vigil session start|end` (supervisor/agent/session_server.h): CLI registration.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>

#include "supervisor/core/base/diagnostics.h"
#include "supervisor/cli/serve_command.h"
#include "supervisor/agent/session_server.h"

namespace vigil {

namespace {

// The options `vigil session start`, `vigil serve` and `vigil mcp` share.
void add_session_options(CLI::App& cmd, SessionArgs& args) {
  cmd.add_option("--settings", args.settings, "settings file (srt format)");
  cmd.add_flag("--allow-writable-settings", args.allow_writable_settings,
               "accept a settings file that the sandboxed commands could modify");
  cmd.add_option("--log", args.log,
                 "the session log (default: $XDG_STATE_HOME/vigil/sessions/ID.jsonl)");
  add_proxy_test_options(cmd, args.proxy_test);
}

}  // namespace

std::function<int()> add_session_command(CLI::App& app, std::vector<std::string> argv) {
  auto* session = app.add_subcommand("session", "one supervisor and one log for many commands");
  session->require_subcommand(1);
  auto args = std::make_shared<SessionArgs>();
  args->argv = std::move(argv);
  auto* start = session->add_subcommand(
      "start", "start a session; prints VIGIL_SESSION=... for `eval` (as ssh-agent does)");
  add_session_options(*start, *args);
  start->add_flag("--ask-tty", args->ask_tty,
                  "ask mode (vigil.network.ask): ask about hosts off the allow list on this "
                  "terminal");
  auto handle = std::make_shared<std::string>();
  auto* end = session->add_subcommand("end", "end a session (its running commands are killed)");
  end->add_option("handle", *handle, "the session's VIGIL_SESSION (default: $VIGIL_SESSION)");
  return [=] {
    if (*start) return cmd_session_start(*args);
    if (handle->empty()) {
      const char* env = std::getenv("VIGIL_SESSION");
      if (env != nullptr) *handle = env;
    }
    if (handle->empty()) {
      print_error("session end: give the handle, or set VIGIL_SESSION");
      return 2;
    }
    return cmd_session_end(*handle);
  };
}

// `vigil serve` and `vigil mcp` (supervisor/cli/serve_command.h).
std::function<int()> add_serve_commands(CLI::App& app, std::vector<std::string> argv) {
  auto args = std::make_shared<SessionArgs>();
  args->argv = std::move(argv);
  auto* serve = app.add_subcommand("serve", "an agent session over JSON-RPC 2.0 on stdio (docs/protocol.md)");
  add_session_options(*serve, *args);
  auto* mcp = app.add_subcommand("mcp", "an MCP stdio server with one tool, run_command (a sandboxed shell)");
  add_session_options(*mcp, *args);
  return [=] {
    if (*serve) return cmd_serve(*args, false);
    if (*mcp) return cmd_serve(*args, true);
    return 2;
  };
}

}  // namespace vigil
