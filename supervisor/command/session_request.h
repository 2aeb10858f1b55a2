// The embedder API's types (supervisor/orchestrator/session_runner.h has run_session() and
// its contract): what a caller asks for, the callbacks it gets, what it is told at the end.
// They live beside the one command that carries them out (sandboxed_command.h), so the
// command's code needs nothing from the orchestrator above it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "supervisor/core/base/result.h"
#include "supervisor/core/base/write_all.h"  // write_all_to(): the default on_output
#include "supervisor/core/events/event_schema.h"
#include "supervisor/command/proxy_test_options.h"
#include "supervisor/command/session_proxy.h"
#include "supervisor/launch/sandbox_launch.h"

namespace vigil {

struct SessionRequest {
  std::vector<std::string> command;     // argv; argv[0] is looked up on the sandbox's PATH
  std::optional<std::string> settings;  // srt-format settings file; none = embedded default
  // The workspace (absolute): the command's working directory, the default writable
  // root, and what relative paths in the settings are resolved against. None: this
  // process's current directory.
  std::optional<std::string> cwd;
  bool allow_writable_settings = false;
  // The session log; none = $XDG_STATE_HOME/vigil/sessions/<id>.jsonl.
  std::optional<std::string> log_path;
  // Capture (default): the command's stdout/stderr pass through the supervisor, go to
  // on_output and into the log as io.stdout/io.stderr chunks. Inherit: the command writes
  // straight to this process's fds 1 and 2, and the log holds no output.
  bool capture_output = true;
  // Append the <sandbox_violations> block to the command's stderr (through on_output when
  // capturing, else to fd 2) when something was denied, as srt-based harnesses expect.
  bool annotate_stderr = true;
  // Render SessionOutcome::violations_json. Off when nobody reads it: for a session denied
  // 100,000 writes it is megabytes (`vigil run` asks only with --violations-fd).
  bool violations_json = true;
  // Wall-clock cap (`vigil run --timeout`): past it every process of the sandbox is
  // killed, stderr says so, and session.end's reason is "limit: timeout".
  std::optional<double> timeout_s;
  // Tests only: weaken the session proxy so that a test server on loopback is reachable
  // (see supervisor/command/proxy_test_options.h; the CLI refuses them without VIGIL_TEST_MODE=1).
  ProxyTestHooks proxy_test;
  // Ask mode: who is asked about a host off the allow list (`vigil run`: srt's agent
  // channel, supervisor/agent/agent_channel.h). None: such a host is refused at once.
  ProxyAsk ask;
};

struct SessionCallbacks {
  // Every record as it is appended to the session log (session.start first, session.end
  // last). Optional.
  std::function<void(const events::Event&)> on_event;
  // The command's output, chunk by chunk, when capturing. Return false when the
  // destination is gone: that stream is closed and the command sees EPIPE. Default:
  // write to this process's stdout / stderr.
  std::function<bool(OutputStream, std::string_view)> on_output;
};

struct SessionOutcome {
  int exit_code = 0;       // the command's status; 128+N when signal N ended it
  std::string session_id;  // as in every log record
  std::string log_path;
  std::string annotation;       // the <sandbox_violations> block; "" when nothing was denied
  std::string violations_json;  // the same as one JSON object (docs/annotation.md)
  std::map<std::string, std::uint64_t> counters;  // as in session.end
};

// bwrap to use: settings bwrapPath, else the first "bwrap" on an absolute PATH entry.
// Empty when none.
std::string find_bwrap(const std::optional<std::string>& configured);

}  // namespace vigil
