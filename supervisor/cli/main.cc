// vigil: runs an AI agent's shell command in a sandbox and says what the sandbox stopped.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <span>

#include "supervisor/cli/cli_subcommands.h"
#include "supervisor/cli/commands.h"
#include "supervisor/core/base/diagnostics.h"
#include "supervisor/core/base/exit_codes.h"
#if !defined(__APPLE__)
#include "supervisor/agent/agent_channel.h"
#include "supervisor/agent/session_server.h"
#endif

namespace vigil {
// supervisor/cli/proxy_command.cc: registers `vigil proxy`; the returned function runs it.
std::function<int()> add_proxy_command(CLI::App& app);
// supervisor/cli/replay_options.cc: registers `vigil replay`; the returned function runs it.
std::function<int()> add_replay_command(CLI::App& app);
// supervisor/cli/undo_command.cc: registers `vigil undo` (Linux).
std::function<int()> add_undo_command(CLI::App& app);
// supervisor/cli/session_command.cc: `vigil session start|end`.
std::function<int()> add_session_command(CLI::App& app, std::vector<std::string> argv);
std::function<int()> add_serve_commands(CLI::App& app, std::vector<std::string> argv);
// supervisor/cli/logs_command.cc: `vigil logs prune`.
std::function<int()> add_logs_command(CLI::App& app);
std::function<int()> add_learn_command(CLI::App& app);
std::function<int()> add_export_command(CLI::App& app);
std::function<int()> add_verify_command(CLI::App& app);
}  // namespace vigil

namespace vigil {
// supervisor/cli/explain_command.cc: `vigil explain --platform macos` (the Seatbelt profile).
int cmd_explain_macos(const ExplainArgs& args);
}  // namespace vigil

namespace {

// `vigil run`'s options; the returned function runs it once parsed.
std::function<int()> add_run_command(CLI::App& app) {
  struct Options {
    vigil::RunArgs run;
    std::string shell_command;
    std::string sandbox_mode = "on";
    std::string output_mode = "capture";
  };
  auto st = std::make_shared<Options>();
  auto* run_cmd = app.add_subcommand("run", "run a command under the sandbox");
  run_cmd->add_option("--settings", st->run.settings,
                      "settings file (srt format); default: the embedded policy");
  run_cmd->add_flag("--allow-writable-settings", st->run.allow_writable_settings,
                    "accept a settings file that the sandboxed command could modify");
  run_cmd->add_option("--session", st->run.session,
                      "run in this agent session (default: $VIGIL_SESSION when set)");
  run_cmd->add_option("--log", st->run.log,
                      "session log path (default: $XDG_STATE_HOME/vigil/sessions/ID.jsonl)");
  run_cmd->add_option("--violations-fd", st->run.violations_fd,
                      "also write the violations as JSON to this fd");
  run_cmd
      ->add_option("--output", st->output_mode,
                   "capture (default: the command's stdout/stderr pass through vigil and into "
                   "the session log) or inherit (straight to this terminal; not logged)")
      ->check(CLI::IsMember({"capture", "inherit"}));
  run_cmd
      ->add_option("--timeout", st->run.timeout,
                   "wall-clock limit in seconds: past it the whole sandbox is killed and the "
                   "session ends with the reason limit: timeout")
      ->check(CLI::PositiveNumber);
  run_cmd->add_option("--sandbox", st->sandbox_mode, "on (default) or off (run unconfined, loudly)")
      ->check(CLI::IsMember({"on", "off"}));
  run_cmd->add_flag("-v,--verbose", st->run.verbose,
                    "end with the session log's path (printed anyway after a denial)");
  vigil::add_proxy_test_options(*run_cmd, st->run.proxy_test);
  CLI::Option* c_opt = run_cmd->add_option("-c", st->shell_command, "run STRING with bash -c");
  run_cmd->add_option("command", st->run.command, "command and arguments (after --)");
  run_cmd->positionals_at_end();
  run_cmd->callback([st, c_opt] {
    if (!st->shell_command.empty() || c_opt->count() > 0) {
      if (!st->run.command.empty())
        throw CLI::ValidationError("give either -c STRING or -- CMD, not both");
      const char* shell = ::access("/bin/bash", X_OK) == 0 ? "/bin/bash" : "/bin/sh";
      st->run.command = {shell, "-c", st->shell_command};
    }
    if (st->run.command.empty())
      throw CLI::ValidationError("nothing to run: give -c STRING or -- CMD ARGS...");
    st->run.sandbox = st->sandbox_mode == "on";
    st->run.capture_output = st->output_mode == "capture";
  });
  return [st] { return vigil::cmd_run(st->run); };
}

// `vigil explain`'s options; the returned function runs it once parsed.
std::function<int()> add_explain_command(CLI::App& app) {
  struct Options {
    vigil::ExplainArgs explain;
    std::string platform = "linux";
    bool seatbelt = false;
  };
  auto st = std::make_shared<Options>();
  auto* explain_cmd = app.add_subcommand("explain", "show the sandbox a policy builds, and why");
  explain_cmd->add_option("--settings", st->explain.settings, "settings file (srt format)");
  explain_cmd->add_flag("--allow-writable-settings", st->explain.allow_writable_settings,
                        "as for run");
  explain_cmd->add_option("--path", st->explain.path, "print the read/write verdict for PATH");
  explain_cmd
      ->add_option(
          "--platform", st->platform,
          "linux (the bwrap argv, default) or macos (the Seatbelt profile and its -D values)")
      ->check(CLI::IsMember({"linux", "macos"}));
  explain_cmd->add_flag("--seatbelt", st->seatbelt, "the same as --platform macos");
  explain_cmd->add_flag("--filters", st->explain.filters,
                        "print each seccomp filter's BPF with the table row behind every jump");
  return [st] {
    const bool macos = st->seatbelt || st->platform == "macos";
    return macos ? vigil::cmd_explain_macos(st->explain) : vigil::cmd_explain(st->explain);
  };
}

#if !defined(__APPLE__)
void warn_channel_unused() {
  vigil::print_warning(
      "SANDBOX_AGENT_CHANNEL_FD: srt's agent channel is spoken by a standalone `vigil run` "
      "only (an agent session asks its own client); the variable is dropped, the channel "
      "not used");
}
#endif

}  // namespace

int main(int argc, char** argv) {
#if !defined(__APPLE__)
  // `vigil run -- CMD...` inside an agent session: straight to the session, as cmd_run()
  // would send it (supervisor/cli/cli_subcommands.h says which command lines qualify).
  const char* session = std::getenv("VIGIL_SESSION");
  if (auto command = vigil::thin_run_command(
          std::span<const char* const>(argv + 1, argv + argc), session)) {
    vigil::configure_logging(std::getenv("VIGIL_LOG"), false);
    // The thin client sends its environment to the session: srt's agent channel is
    // `vigil run`'s own, and never the command's (agent_channel.h).
    if (vigil::AgentChannel::drop_from_environment()) warn_channel_unused();
    return vigil::run_in_session(session, *command, true, std::nullopt);
  }
#endif
  CLI::App app{"vigil: run an agent's command in a sandbox and report what it stopped"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "vigil 0.1.0");
  // Before the subcommand (`vigil -v run ...`): a debug trace of the launch on stderr.
  // `vigil run -v` keeps its own meaning (the session log's path at the end).
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose,
               "a debug trace on stderr: the plan and each mount, bwrap's argv, each phase's "
               "time, the session log (as VIGIL_LOG=debug; VIGIL_LOG also takes trace, info, "
               "warning, error, off)");

  // Only the subcommand argv names is built (supervisor/cli/cli_subcommands.h): the others'
  // options and validators would cost every `vigil run` for nothing.
  const vigil::SubcommandSet wanted =
      vigil::subcommands_to_register(std::span<const char* const>(argv + 1, argv + argc));

  std::function<int()> run_run;
  if (wanted.run) run_run = add_run_command(app);

  std::function<int()> run_explain;
  if (wanted.explain) run_explain = add_explain_command(app);

  bool probe_json = false;
  CLI::App* probe_cmd = nullptr;
  if (wanted.probe) {
    probe_cmd = app.add_subcommand(
        "doctor", "check what this machine gives vigil, with the exact fix for what is missing");
    probe_cmd->alias("probe");  // its first name
    probe_cmd->add_flag("--json", probe_json, "machine-readable output");
  }

  std::function<int()> run_proxy;
  if (wanted.proxy) run_proxy = vigil::add_proxy_command(app);
  std::function<int()> run_replay, run_undo;
  if (wanted.replay) run_replay = vigil::add_replay_command(app);
#if !defined(__APPLE__)
  if (wanted.replay) run_undo = vigil::add_undo_command(app);
#endif
  std::function<int()> run_session_cmd, run_serve_cmd;
  if (wanted.session) {
    run_session_cmd = vigil::add_session_command(app, std::vector<std::string>(argv, argv + argc));
    run_serve_cmd = vigil::add_serve_commands(app, std::vector<std::string>(argv, argv + argc));
  }

  std::function<int()> run_logs;
  if (wanted.logs) run_logs = vigil::add_logs_command(app);
  std::function<int()> run_learn, run_export, run_verify;
  if (wanted.forensics) {
    run_learn = vigil::add_learn_command(app);
    run_export = vigil::add_export_command(app);
    run_verify = vigil::add_verify_command(app);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : vigil::to_int(vigil::ExitCode::kUsage);
  }
  vigil::configure_logging(std::getenv("VIGIL_LOG"), verbose);
  if (run_run && app.got_subcommand("run")) return run_run();
  if (run_explain && app.got_subcommand("explain")) return run_explain();
  if (probe_cmd != nullptr && *probe_cmd) return vigil::cmd_probe(probe_json);
  if (run_proxy && app.got_subcommand("proxy")) return run_proxy();
  if (run_replay && app.got_subcommand("replay")) return run_replay();
  if (run_undo && app.got_subcommand("undo")) return run_undo();
  if (run_logs && app.got_subcommand("logs")) return run_logs();
  if (run_learn && app.got_subcommand("learn")) return run_learn();
  if (run_export && app.got_subcommand("export")) return run_export();
  if (run_verify && app.got_subcommand("verify")) return run_verify();
#if !defined(__APPLE__)
  // A session's commands get the session's environment: the channel never reaches them.
  if ((run_session_cmd && app.got_subcommand("session")) ||
      (run_serve_cmd && (app.got_subcommand("serve") || app.got_subcommand("mcp")))) {
    if (vigil::AgentChannel::drop_from_environment()) warn_channel_unused();
  }
#endif
  if (run_session_cmd && app.got_subcommand("session")) return run_session_cmd();
  if (run_serve_cmd && (app.got_subcommand("serve") || app.got_subcommand("mcp")))
    return run_serve_cmd();
  return vigil::to_int(vigil::ExitCode::kUsage);
}
