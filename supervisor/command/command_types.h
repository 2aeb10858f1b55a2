// The types one command's sandbox is made of and gives back: its description
// (SandboxedCommand, made only by sandboxed_command() in command_spec.h), where its records
// go (CommandLogSink, CommandRecord) and its outcome. In a header of their own so that the
// parts of run_sandboxed() (command_streams, command_backstop, spare_handoff,
// block_delivery) share them without including the function they are parts of.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "supervisor/core/policy/cap_plan.h"
#include "supervisor/core/policy/policy.h"
#include "supervisor/core/base/result.h"
#include "supervisor/core/events/event_schema.h"
#include "supervisor/command/proxy_test_options.h"
#include "supervisor/launch/sandbox_launch.h"
#include "supervisor/launch/sandbox_plan.h"
#include "supervisor/launch/session_netns.h"
#include "supervisor/command/session_proxy.h"
#include "supervisor/command/spare_sandbox.h"

namespace vigil {

// The records of one command, as run_sandboxed() needs them. append() and count() are
// thread-safe (the proxy's thread logs its decisions).
class CommandRecord {
 public:
  virtual ~CommandRecord() = default;
  virtual void append(events::Source src, events::Body body) = 0;
  virtual void count(const std::string& name, std::uint64_t n = 1) = 0;
  // The block for the model ("" when nothing was denied) and the same as JSON, from
  // exactly what this command logged.
  virtual std::string annotation() const = 0;
  virtual std::string violations_json() const = 0;
  // What was allowed and is only worth knowing (annotation_note(), report/annotation.h),
  // "" when nothing: shown outside the block, at `vigil -v`.
  virtual std::string note() const { return {}; }
  virtual void log_annotation(const std::string& block, bool newline_before) = 0;
  // Between hold_writes(true) and hold_writes(false) the records may be written to the
  // log together (SessionLog::hold_writes); a failed write is counted.
  virtual void hold_writes(bool on) { (void)on; }
};

// Where one command's records go.
class CommandLogSink {
 public:
  virtual ~CommandLogSink() = default;
  // The log file, once the policy is known (the sandbox must not be able to change it).
  virtual Result<std::string> log_path(const PreparedSandbox& prepared) = 0;
  // The sandbox could write the log's directory: the file must exist before bwrap binds
  // it read-only. Called at most once, before open().
  virtual Result<void> create_now() = 0;
  // After bwrap started and before the command can run: the record is open from here.
  virtual Result<CommandRecord*> open(const PreparedSandbox& prepared) = 0;
};

struct SandboxedCommand {
  std::vector<std::string> command;  // argv; argv[0] is looked up on the sandbox's PATH
  std::string cwd;                   // absolute: where the command starts
  // The workspace: the plan's default writable root and what relative settings paths are
  // resolved against. Empty: `cwd` (`vigil run`). An agent session's is fixed when it
  // starts, and `cwd` lies inside it (supervisor/agent/command_cwd.h).
  std::string workspace;
  std::optional<std::string> settings;
  bool allow_writable_settings = false;
  bool capture_output = true;   // SessionRequest::capture_output
  bool annotate_stderr = true;  // SessionRequest::annotate_stderr
  ProxyTestHooks proxy_test;
  // A session's: the command's own environment ("NAME=value"; none: this process's),
  // the fds it gets as 0, 1 and 2 (its client's), the allowlist as the session has it
  // now (none: the settings' own), and hooks for the proxy's decisions.
  std::optional<std::vector<std::string>> env;
  std::array<int, 3> stdio = {0, 1, 2};
  std::optional<NetworkPolicy> net;
  // Ask mode (an agent session with vigil.network.ask and a client to ask).
  ProxyAsk ask;
  // Called with the sandbox's init process once it exists (a session kills it on end).
  std::function<void(pid_t bwrap)> on_spawned;
  // What this host offers for resource caps, as a session probed it once at its start
  // (the supervisor's own cgroups and the machine's memory do not change under it);
  // none: probed for this command.
  std::optional<HostLimits> host_limits;
  // Render SandboxedOutcome::violations_json (off when nobody reads it).
  bool violations_json = true;
  // Names the command's quarantine directory (<state>/vigil/quarantine/<id>): the session
  // id for `vigil run`, "<session>-<command>" in an agent session.
  std::string quarantine_id;
  // Wall-clock cap (`vigil run --timeout`): past it every process of the sandbox is
  // killed, stderr says so, and the outcome's limit is "limit: timeout".
  std::optional<double> timeout_s;
  // Written when a signal is forwarded (an eventfd the default output writer also polls,
  // so that it never blocks for good); -1: none.
  int interrupted_fd = -1;
  // The command's stdout and stderr are one pipe (vigil's own are the same open file).
  bool merge_output = false;
  // A warm session's spare (spare_sandbox.h): the sandbox is built without its command,
  // which `spare` hands over (or not: then nothing runs and an error is returned).
  // `command`, `env`, `stdio`, `quarantine_id` and `on_spawned` are then the spare's
  // (a placeholder, none, /dev/null, its capture store's name, its tracking); the
  // output and the records go where the sink and `on_output` lead once it is handed one.
  SpareWait* spare = nullptr;
  // An agent session's network namespace (supervisor/launch/session_netns.h): the sandbox
  // joins it, with a loopback address of its own for its bridges; null: a namespace of
  // the sandbox's own (`vigil run`).
  std::shared_ptr<SessionNetns> netns;
};

struct SandboxedOutcome {
  int exit_code = 0;
  std::string annotation;
  std::string violations_json;
  std::string limit;  // "limit: timeout" when vigil ended the command; else ""
};

}  // namespace vigil
