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

#include "supervisor/command/session_request.h"
#include "supervisor/core/base/result.h"

namespace vigil {

// Sets up the sandbox (policy, mounts, vigil-init, proxy, log), runs the command, and tears
// it all down. An error means nothing was run (a bad policy: Errc::kInvalidPolicy or
// kRefused; a machine that cannot sandbox: another code), with the cause and the fix in
// the message.
Result<SessionOutcome> run_session(const SessionRequest& request,
                                   const SessionCallbacks& callbacks);

}  // namespace vigil
