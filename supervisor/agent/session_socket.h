// The socket of `vigil session` (session_server.h), authenticated in both directions.
//
// The server's side: the socket lives in a fresh private directory (0700, mkdtemp) under
// $XDG_RUNTIME_DIR when that directory is this user's own and private, else under the
// user's state directory (<state>/vigil/run, made 0700 and checked): never in a shared
// directory such as /tmp, where another user could take a name first or after the end.
//
// The client's side (`vigil run` with VIGIL_SESSION, `vigil session end`): before it sends
// anything (its argv, cwd, whole environment and stdio), it checks that the directory is a
// real directory (not a link) owned by this user with no access for group or others, that
// the socket in it is this user's, connects through the directory it checked (no name is
// looked up twice), and that the process listening is this user's (SO_PEERCRED) and, when
// VIGIL_SESSION_PID is set, the session's own supervisor: a session ended and replaced,
// by another user or by anyone, is refused with an error that names the fix.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <optional>
#include <string>

#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil {

// The socket's name in its directory.
inline constexpr const char* kSessionSocketName = "agent.sock";

// Server: a fresh private directory for the socket (see above). `xdg_runtime_dir`,
// `xdg_state_home` and `home` are this process's variables (may be null).
Result<std::string> make_session_socket_dir(const char* xdg_runtime_dir, const char* xdg_state_home,
                                            const char* home);

// Server: binds the socket at `path` (0600) without listening: the process that will serve
// it calls listen(2), so that a client's SO_PEERCRED names that process.
Result<UniqueFd> bind_session_socket(const std::string& path);

// Pure: why a directory whose lstat is `st` must not be trusted to hold this user's
// session ("" when it may): not a directory, not owned by `uid`, open to group or others.
std::string untrusted_dir_reason(const struct stat& st, uid_t uid);
// Pure: the same for the socket itself.
std::string untrusted_socket_reason(const struct stat& st, uid_t uid);

// The fix for a handle that does not lead to a live session of this user's.
std::string stale_session_fix();

// Client: connects to the session at `handle` (VIGIL_SESSION) after the checks above.
// `expected_pid`: VIGIL_SESSION_PID when set (the supervisor that must be listening).
Result<UniqueFd> connect_to_session(const std::string& handle, std::optional<pid_t> expected_pid);

// VIGIL_SESSION_PID of this process, when set to a pid and `handle` is this process's
// VIGIL_SESSION (a handle given on the command line may be another session's).
std::optional<pid_t> session_pid_from_env(const std::string& handle);

}  // namespace vigil
