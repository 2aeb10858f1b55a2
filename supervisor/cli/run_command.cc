// `vigil run`: the CLI over run_session() (supervisor/session/session_runner.h).
#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "supervisor/cli/commands.h"
#include "supervisor/core/base/diagnostics.h"
#include "supervisor/core/base/display_text.h"
#include "supervisor/core/base/exit_codes.h"
#include "supervisor/launch/sandbox_launch.h"
#include "supervisor/session/session_runner.h"
#include "supervisor/session/session_server.h"

namespace vigil {

int exit_code_for(const Error& e) {
  switch (e.code) {
    case Errc::kInvalidPolicy:
    case Errc::kRefused:
      return to_int(ExitCode::kUsage);
    default:
      return to_int(ExitCode::kSandboxSetup);
  }
}

int report(const Error& e) {
  print_error(e.message);
  return exit_code_for(e);
}

#if defined(__APPLE__)
// supervisor/launch/macos_launch.cc: sandbox-exec instead of bwrap (run_session is Linux's).
int cmd_run_macos(const RunArgs& args);
int cmd_run(const RunArgs& args) { return cmd_run_macos(args); }
#else
int cmd_run(const RunArgs& args) {
  // Inside an agent session: the session's supervisor runs it (session_server.h).
  const char* env_session = std::getenv("VIGIL_SESSION");
  const std::optional<std::string> session =
      args.session ? args.session
                   : (env_session != nullptr && *env_session != '\0'
                          ? std::optional<std::string>(env_session)
                          : std::nullopt);
  if (session && args.sandbox) {
    if (args.settings || args.log || args.allow_writable_settings) {
      std::fprintf(stderr,
                   "vigil: warning: --settings, --log and --allow-writable-settings are the "
                   "session's (given to `vigil session start`); ignored here (unset "
                   "VIGIL_SESSION to run outside the session)\n");
    }
    return run_in_session(*session, args.command, args.capture_output, args.violations_fd);
  }
  auto proxy_test = check_proxy_test_options(args.proxy_test);
  if (!proxy_test) return report(proxy_test.error());
  warn_proxy_test_mode(*proxy_test);
  if (!args.sandbox) {
    std::fprintf(stderr,
                 "vigil: WARNING: --sandbox off: running the command UNCONFINED, with no "
                 "filesystem or network restrictions\n");
    auto r = launch_unconfined(args.command);
    if (!r) return report(r.error());
    return r->exit_code;
  }
  // A closed stdout must end the command's writes (EPIPE), not the supervisor in the
  // middle of its log: SIGPIPE is ignored here, and restored to default for bwrap.
  std::signal(SIGPIPE, SIG_IGN);
  SessionRequest request;
  request.command = args.command;
  request.settings = args.settings;
  request.allow_writable_settings = args.allow_writable_settings;
  request.log_path = args.log;
  request.capture_output = args.capture_output;
  request.violations_json = args.violations_fd.has_value();
  request.timeout_s = args.timeout;
  request.proxy_test = *proxy_test;
  auto outcome = run_session(request, {});
  if (!outcome) return report(outcome.error());
  if (args.violations_fd) {
    (void)write_all_to(*args.violations_fd, outcome->violations_json);
  }
  // Where to look: after the block when something was denied (the block's "see" names
  // the log only when lines overflow), or on request. A clean run's stderr is unchanged.
  if (args.verbose || !outcome->annotation.empty()) {
    std::fprintf(stderr, "vigil: session log: %s\n", escape_text(outcome->log_path).c_str());
  }
  return outcome->exit_code;
}
#endif  // !__APPLE__

}  // namespace vigil
