// `vigil run`: the CLI over run_session() (supervisor/orchestrator/session_runner.h).
#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "supervisor/cli/commands.h"
#include "supervisor/core/base/diagnostics.h"
#include "supervisor/core/base/display_text.h"
#include "supervisor/core/base/exit_codes.h"
#include "supervisor/launch/sandbox_launch.h"
#include "supervisor/orchestrator/session_runner.h"
#include "supervisor/core/base/write_all.h"
#if !defined(__APPLE__)
#include "supervisor/agent/agent_channel.h"
#include "supervisor/agent/session_server.h"
#endif

namespace vigil {

void warn_unconfined() {
  print_error(
      "WARNING: --sandbox off: running the command UNCONFINED, with no filesystem or network "
      "restrictions");
}

#if !defined(__APPLE__)
// `--sandbox off` on Linux (macOS's is in cli/macos_commands.cc).
int run_unconfined(const std::vector<std::string>& command) {
  auto r = launch_unconfined(command);
  if (!r) return report(r.error());
  return r->exit_code;
}
#endif

#if !defined(__APPLE__)
// The channel asks about hosts off the allow list (ask mode, whatever the settings say:
// the harness that handed it over asked to be asked) and hears of every denial.
void speak_agent_channel(const std::shared_ptr<AgentChannel>& channel, SessionRequest& request,
                         SessionCallbacks& callbacks) {
  request.ask.asker = channel;
  request.ask.timeout_from_settings = true;
  callbacks.on_event = [channel](const events::Event& e) { channel->on_event(e); };
  // A harness answers vigil's hello at once; one that does not is not waited for long.
  if (!channel->wait_ready(std::chrono::seconds(2))) {
    print_warning(
        "agent channel: no hello (protocol_version 1) from the harness within 2 s; requests "
        "off the allow list are denied until it comes");
  }
}
#endif

// Both platforms: run_session() is the one orchestrator (session_orchestrator.h) over
// Linux's bwrap backend or macOS's Seatbelt one.
int cmd_run(const RunArgs& args) {
#if !defined(__APPLE__)
  // Inside an agent session: the session's supervisor runs it (session_server.h).
  const char* env_session = std::getenv("VIGIL_SESSION");
  const std::optional<std::string> session =
      args.session ? args.session
                   : (env_session != nullptr && *env_session != '\0'
                          ? std::optional<std::string>(env_session)
                          : std::nullopt);
  if (session && args.sandbox) {
    // srt's agent channel is a standalone run's: a run sent to an agent session is asked
    // about by the session's client. Dropped all the same: the command never gets it.
    if (AgentChannel::drop_from_environment()) {
      print_warning(
          "SANDBOX_AGENT_CHANNEL_FD: a command run in an agent session is asked about by the "
          "session's client, not over the agent channel; the channel is not used");
    }
    if (args.settings || args.log || args.allow_writable_settings) {
      print_warning(
          "--settings, --log and --allow-writable-settings are the session's (given to `vigil "
          "session start`); ignored here (unset VIGIL_SESSION to run outside the session)");
    }
    return run_in_session(*session, args.command, args.capture_output, args.violations_fd);
  }
  // srt's agent channel (agent_channel.h): taken out of the environment and made
  // close-on-exec first, whatever this run turns out to be (--sandbox off too), so no
  // command inherits it.
  const std::shared_ptr<AgentChannel> channel = AgentChannel::from_environment();
#endif
  auto proxy_test = check_proxy_test_options(args.proxy_test);
  if (!proxy_test) return report(proxy_test.error());
  warn_proxy_test_mode(*proxy_test);
  if (!args.sandbox) {
    warn_unconfined();
    return run_unconfined(args.command);
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
  SessionCallbacks callbacks;
#if !defined(__APPLE__)
  if (channel) {
    speak_agent_channel(channel, request, callbacks);
  }
#endif
  auto outcome = run_session(request, callbacks);
#if !defined(__APPLE__)
  // What the run's last denials became is written before vigil exits (a bounded wait).
  if (channel) channel->stop();
#endif
  if (!outcome) return report(outcome.error());
  if (args.violations_fd) {
#if defined(__APPLE__)
    (void)write_all(*args.violations_fd, outcome->violations_json, "--violations-fd");
#else
    (void)write_all_to(*args.violations_fd, outcome->violations_json);  // EAGAIN-safe
#endif
  }
  // Where to look: after the block when something was denied (the block's "see" names
  // the log only when lines overflow), or on request. A clean run's stderr is unchanged.
  if (args.verbose || !outcome->annotation.empty()) {
    print_notice("session log: " + outcome->log_path);
  }
  return outcome->exit_code;
}

}  // namespace vigil
