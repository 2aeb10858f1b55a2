// `vigil session start|end` and the thin client `vigil run` becomes inside a session.
//
// start: validates the settings, binds a unix socket in a private directory (0700) under
// $XDG_RUNTIME_DIR (else the user's state directory; session_socket.h), and leaves two processes behind, detached from the
// terminal, printing the handle in the style of ssh-agent:
//
//   VIGIL_SESSION=/run/user/1000/vigil-session-Ab12Cd/agent.sock; export VIGIL_SESSION;
//   VIGIL_SESSION_PID=4242; export VIGIL_SESSION_PID;
//
//   watchdog   a child subreaper: when the supervisor below dies (killed, crashed or
//              ended), every process of the session reparents to it; it kills them all,
//              waits for them, sweeps the session directories (their placeholders go),
//              removes the socket directory and exits.
//   supervisor (VIGIL_SESSION_PID) holds the AgentSession (policy, log) and serves the
//              socket: one thread per connection. Only the same user may connect: the
//              directory's mode, and SO_PEERCRED checked for each connection. The
//              client checks the server as well (session_socket.h).
// end: prints `unset VIGIL_SESSION; unset VIGIL_SESSION_PID;` for `eval`, as `ssh-agent -k`.
//
// Every sandbox's bwrap runs with --die-with-parent (the supervisor's thread that
// started it), and the watchdog catches whatever survives.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "supervisor/agent/agent_session.h"

namespace vigil {

int cmd_session_start(const SessionArgs& args);
// Pure: what `vigil session start` prints for `eval` (VIGIL_SESSION, single-quoted so that
// no byte of the path is shell syntax; VIGIL_SESSION_PID).
std::string session_start_lines(const std::string& socket_path, const std::string& pid);
int cmd_session_end(const std::string& handle);

// `vigil run` with VIGIL_SESSION set or --session H: sends argv, cwd, the environment and
// its stdio to the session and exits with the command's status. Returns the exit status.
int run_in_session(const std::string& handle, const std::vector<std::string>& command,
                   bool capture_output, std::optional<int> violations_fd);

}  // namespace vigil
