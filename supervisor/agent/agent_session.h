// An agent session: one policy, one hash-chained log, many commands. Each command runs
// in its own sandbox (run_sandboxed: bwrap + vigil-init + its own proxy listener), its
// records framed by command.start / command.end and tagged with its id in the envelope,
// so commands running at the same time never mix. The plan is refreshed for every
// command (the workspace changes between commands); the settings file is re-read then
// too, while the allowed domains are the session's (policy.update changes them live for
// the commands that start afterwards).
//
// `vigil session` (a socket for thin clients), `vigil serve` (JSON-RPC) and `vigil mcp`
// all drive one of these. Thread-safe: run() may be called from many threads at once.
#pragma once

#include <time.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "proxy/ask.h"
#include "supervisor/core/base/result.h"
#include "supervisor/core/events/event_schema.h"
#include "supervisor/core/policy/cap_plan.h"
#include "supervisor/core/policy/policy.h"
#include "supervisor/launch/sandbox_launch.h"
#include "supervisor/launch/session_netns.h"
#include "supervisor/log/session_log.h"
#include "supervisor/backstop/change_clock.h"
#include "supervisor/command/command_spec.h"
#include "supervisor/command/proxy_test_options.h"
#include "supervisor/command/sandboxed_command.h"

namespace vigil {

// Ask mode (vigil.network.ask): one held request, as the session's client is asked it.
struct AskPrompt {
  std::uint64_t ask = 0;      // the session's count; net.ask / net.ask.answer name it
  std::uint64_t command = 0;  // the command that made the request
  std::string proto, host;    // canonical host (IPv6 without brackets)
  std::uint16_t port = 0;
  std::string address;     // the address that passed the guard (where it would connect)
  std::string entry;       // "host:port": what "session" and "always" allow
  double timeout_s = 0;    // then it is denied
  bool can_always = false;  // the session has a settings file to write "always" into
};
// The client's answer: "once", "session", "always" or "deny" (anything else is a deny,
// recorded with what was said). Callable from any thread, once; false when it came too
// late (the hold had already ended).
using AskReply = std::function<bool(std::string_view answer)>;

struct AgentSessionOptions {
  std::optional<std::string> settings;  // absolute; none: the embedded default
  bool allow_writable_settings = false;
  std::optional<std::string> log_path;  // none: $XDG_STATE_HOME/vigil/sessions/<id>.jsonl
  // Where the session started (absolute): its workspace, fixed for every command
  // (supervisor/agent/command_cwd.h).
  std::string cwd;
  std::vector<std::string> argv;        // how it was started, for session.start
  ProxyTestHooks proxy_test;
  // Every record as it is written (under the log's lock; must not call back in).
  std::function<void(const events::Event&)> on_event;
  // Who answers in ask mode (`vigil serve`: its client; `vigil session start --ask-tty`:
  // the terminal). Must not block. None: nobody can be asked, hosts off the list are
  // refused (a warning says so when vigil.network.ask is on).
  std::function<void(const AskPrompt&, AskReply)> ask_client;
  // How ask_client's answers are given, for the log (net.ask.answer's `via`): "tty" or
  // "client".
  std::string ask_via = "client";
};

// What `vigil session start`, `vigil serve` and `vigil mcp` take on their command line.
struct SessionArgs {
  std::optional<std::string> settings;
  bool allow_writable_settings = false;
  std::optional<std::string> log;
  ProxyTestOptions proxy_test;
  std::vector<std::string> argv;  // how vigil was started, for session.start
  bool ask_tty = false;           // session start: ask mode's questions on the terminal
};
// The options for those args, in the current directory (a relative --settings is its).
Result<AgentSessionOptions> session_options(const SessionArgs& args);

struct CommandRun {
  std::vector<std::string> argv;
  std::string cwd;  // absolute
  std::optional<std::vector<std::string>> env;
  std::array<int, 3> stdio = {0, 1, 2};  // stdin always; 1 and 2 when not capturing
  bool capture_output = true;
  // The <sandbox_violations> block at the end of stderr (the thin client); `serve` and
  // `mcp` hand it over in their result instead (one block per result).
  bool annotate_stderr = true;
  // The output, when capturing. Default: to stdio[1] / stdio[2].
  std::function<bool(OutputStream, std::string_view)> on_output;
  // Told the command's id before anything of it is logged, and its bwrap once it runs.
  std::function<void(std::uint64_t id)> on_id;
  std::function<void(pid_t bwrap)> on_spawned;
  // The caller starts the next command's spare (start_next()) once its client has the
  // answer: started on run()'s way out, the spare's set-up competes for the CPUs with the
  // answer's delivery and the client's exit. The spare is made (and taken by a command
  // coming sooner) all the same.
  bool defer_spare = false;
  // When the request came (AgentSession::change_start()), if before run() (a socket
  // client: when it connected): the backstop's "during the command" starts there.
  std::optional<ChangeStart> requested_at;
};

struct CommandOutcome {
  std::uint64_t id = 0;
  int exit_code = 0;
  std::string annotation;       // "" when nothing was denied
  std::string violations_json;  // one line
};

class AgentSpare;    // agent_spare.h
class CommandAsker;  // agent_spare.h

class AgentSession {
 public:
  // Loads the policy (an error names the fix) and opens the log with session.start.
  static Result<std::unique_ptr<AgentSession>> open(AgentSessionOptions options);
  ~AgentSession();

  // Runs one command to its end. An error: nothing ran (a cwd outside the session's
  // workspace, the sandbox could not be set up, the session is ending).
  Result<CommandOutcome> run(const CommandRun& run);
  // After run() with CommandRun::defer_spare: starts the spare run() made ready to start
  // (a command arriving sooner takes it, and starts it, all the same).
  void start_next(const CommandRun& run);

  // Logs that command `id` was cancelled (command.cancel: who, how, and the grace before
  // SIGKILL); the caller stops its sandbox (command_stop.h).
  void log_cancel(std::uint64_t id, const std::string& by, const std::string& via,
                  const std::string& reason, std::uint64_t grace_ms);

  // Adds / removes allowedDomains entries (validated first; logged as policy.update).
  Result<void> update_allowed_domains(const std::vector<std::string>& add,
                                      const std::vector<std::string>& remove);

  // Kills every running command's sandbox (SIGKILL to its bwrap: the sandbox dies with
  // it) and refuses new ones.
  void kill_all();
  // Waits for the running commands, then session.end and closes the log.
  Result<void> end(int exit_code = 0);

  std::vector<std::string> allowed_domains();
  // The backstop's start for a command requested now (change_clock.h): a floor stamp
  // where the kernel has one, so that no command waits for the coarse clock.
  ChangeStart change_start() { return vigil::change_start(clock_.get()); }
  const std::string& log_path() const { return log_path_; }
  const std::string& id() const { return id_; }
  // The workspace, resolved: every command's writable root; a command's cwd lies in it.
  const std::string& workspace() const { return workspace_; }

 private:
  class Command;
  using Spare = AgentSpare;
  AgentSession() = default;
  void dispatch(const events::Event& e);
  // What every command of this session is built from (command_spec.h). Under mu_.
  SessionInputs session_inputs() const;
  // Ask mode (agent_session_ask.cc).
  void ask(std::uint64_t command, const std::shared_ptr<proxy::AskTicket>& ticket);
  // `via`: how the answer was given ("" when nobody gave it: timeout, cancelled).
  proxy::AskAnswer settle(std::uint64_t command, std::uint64_t ask, const std::string& entry,
                          proxy::AskAnswer answer, std::string error, std::string via = "");

  AgentSessionOptions options_;
  std::string id_, log_path_;
  std::string workspace_;  // options_.cwd resolved (realpath) at open
  std::unique_ptr<SessionLog> log_;
  std::mutex mu_;  // everything below
  NetworkPolicy net_;
  std::map<std::uint64_t, Command*> running_;
  std::map<std::uint64_t, pid_t> bwraps_;
  std::uint64_t next_id_ = 1;
  std::size_t active_ = 0;  // commands between run()'s start and its end
  bool ending_ = false;
  std::condition_variable idle_;
  std::map<std::string, std::uint64_t> counters_;  // commands, commands.failed
  HostLimits host_limits_;  // probed once, at open (SandboxedCommand::host_limits)
  std::unique_ptr<ChangeClock> clock_;  // null: no floor here (the commands wait instead)
  // The network namespace every command of the session joins (session_netns.h): loopback
  // shared across them, as in a developer's shell. Released at end().
  std::shared_ptr<SessionNetns> netns_;
  // Ask mode: on when vigil.network.ask is and someone can answer.
  bool ask_ = false;
  std::chrono::milliseconds ask_timeout_{60'000};
  std::uint64_t next_ask_ = 1;
  std::set<std::string> ask_allowed_;  // "host:port" answered session / always
  std::mutex settings_mu_;             // one "always" write at a time
  // One policy.update at a time. Never taken under mu_ or the log's lock: an update
  // appends its record holding it, and the log's listener takes mu_ under the log's lock.
  std::mutex update_mu_;

  // The spare sandbox kept ready for the next command (agent_session_spare.cc,
  // supervisor/command/spare_sandbox.h). A command takes it when its refreshed plan is the
  // spare's, else discards it; the next one is started when a command ends.
  // Counted in session.end: commands.warm (ran in a spare), spares.discarded.
  std::unique_ptr<Spare> take_spare(const std::string& cwd, bool capture);
  // The outcome when the spare ran the command; none when it could not take it (then
  // nothing of the command was recorded and it is launched afresh).
  std::optional<Result<SandboxedOutcome>> run_in_spare(
      std::unique_ptr<Spare> spare, const SandboxedCommand& cmd, CommandLogSink& command,
      const std::function<bool(OutputStream, std::string_view)>& forward, std::uint64_t id,
      const ChangeStart& start);
  // launch false: made and kept, its thread started later (Spare::launch()).
  void start_spare(const std::string& cwd, bool capture, bool launch = true);
  void retire(std::unique_ptr<Spare> spare);
  std::vector<std::unique_ptr<Spare>> take_all_spares();  // under mu_
  std::unique_ptr<Spare> spare_;                 // under mu_
  std::vector<std::unique_ptr<Spare>> retired_;  // under mu_: discarded, to be joined
  std::uint64_t next_spare_ = 1;
  int spare_failures_ = 0;  // in a row; at 3 no more spares (each command launches fresh)
};

}  // namespace vigil
