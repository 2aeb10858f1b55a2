// The embedder API: run one command in a vigil sandbox from C++ (an agent harness), with
// the events as they happen, the annotation for the model and the exit status at the end.
// `vigil run` is a thin CLI over run_session().
//
//   vigil::SessionRequest req;
//   req.command = {"/bin/bash", "-c", "make test"};
//   req.settings = "/etc/agent/sandbox.json";          // none: the embedded default
//   vigil::SessionCallbacks cb;
//   cb.on_event = [](const vigil::events::Event& e) { ... };   // live, in log order
//   cb.on_output = [](vigil::OutputStream s, std::string_view bytes) { ...; return true; };
//   auto outcome = vigil::run_session(req, cb);
//   if (!outcome) { /* the sandbox could not be set up: outcome.error().message */ }
//   else { outcome->exit_code; outcome->annotation; outcome->log_path; }
//
// Threading: run_session blocks until the command and everything it started are gone.
// on_event may be called from the session proxy's thread as well as the caller's; the
// calls never overlap and come in the log's order. on_output is called on the caller's
// thread. Neither may call back into vigil. While it runs, run_session blocks SIGINT,
// SIGTERM, SIGHUP, SIGQUIT and SIGCHLD in the calling thread and forwards the first four to
// the command (block them in your other threads if the command should get them: a thread
// that leaves them open may take them). The end of the sandbox is seen whatever other
// threads do with SIGCHLD (a pidfd), and SIGPIPE is never raised by vigil's own writes.
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
#include "supervisor/session/proxy_test_options.h"
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
  // (see supervisor/session/proxy_test_options.h; the CLI refuses them without VIGIL_TEST_MODE=1).
  ProxyTestHooks proxy_test;
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

// Sets up the sandbox (policy, mounts, vigil-init, proxy, log), runs the command, and tears
// it all down. An error means nothing was run (a bad policy: Errc::kInvalidPolicy or
// kRefused; a machine that cannot sandbox: another code), with the cause and the fix in
// the message.
Result<SessionOutcome> run_session(const SessionRequest& request,
                                   const SessionCallbacks& callbacks);

// bwrap to use: settings bwrapPath, else the first "bwrap" on an absolute PATH entry.
// Empty when none.
std::string find_bwrap(const std::optional<std::string>& configured);

}  // namespace vigil
