// `vigil session start|end` (supervisor/session_server.h): CLI registration.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <functional>
#include <memory>

#include "supervisor/session_server.h"

namespace vigil {

std::function<int()> add_session_command(CLI::App& app, std::vector<std::string> argv) {
  auto* session = app.add_subcommand("session", "one supervisor and one log for many commands");
  session->require_subcommand(1);
  auto start_args = std::make_shared<SessionStartArgs>();
  auto* start = session->add_subcommand(
      "start", "start a session; prints VIGIL_SESSION=... for `eval` (as ssh-agent does)");
  start->add_option("--settings", start_args->settings, "settings file (srt format)");
  start->add_flag("--allow-writable-settings", start_args->allow_writable_settings,
                  "accept a settings file that the sandboxed commands could modify");
  start->add_option("--log", start_args->log,
                    "the session log (default: $XDG_STATE_HOME/vigil/sessions/ID.jsonl)");
  add_proxy_test_options(*start, start_args->proxy_test);
  auto handle = std::make_shared<std::string>();
  auto* end = session->add_subcommand("end", "end a session (its running commands are killed)");
  end->add_option("handle", *handle, "the session's VIGIL_SESSION (default: $VIGIL_SESSION)");
  return [=] {
    if (*start) return cmd_session_start(*start_args, argv);
    if (handle->empty()) {
      const char* env = std::getenv("VIGIL_SESSION");
      if (env != nullptr) *handle = env;
    }
    if (handle->empty()) {
      std::fprintf(stderr, "vigil: session end: give the handle, or set VIGIL_SESSION\n");
      return 2;
    }
    return cmd_session_end(*handle);
  };
}

}  // namespace vigil
