#include "supervisor/agent/session_socket.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "supervisor/core/base/display_text.h"
#include "supervisor/log/session_log.h"

namespace vigil {
namespace {

// Our own directory, private: may hold our sockets.
bool private_dir_of_ours(const char* path) {
  struct stat st {};
  return path != nullptr && path[0] == '/' && ::lstat(path, &st) == 0 &&
         untrusted_dir_reason(st, ::geteuid()).empty();
}

std::string octal_mode(mode_t m) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(m & 07777));
  return buf;
}

Error refused(const std::string& handle, const std::string& why) {
  // 125 as for a session that cannot be reached: the command did not run.
  return make_error(Errc::kUnsupported, "refusing the vigil session at " + escape_text(handle) + ": " +
                                        why + " (not the session this user started there). " +
                                        stale_session_fix());
}

}  // namespace

std::string untrusted_dir_reason(const struct stat& st, uid_t uid) {
  if (S_ISLNK(st.st_mode)) return "its directory is a symbolic link";
  if (!S_ISDIR(st.st_mode)) return "its directory is not a directory";
  if (st.st_uid != uid) return "its directory belongs to uid " + std::to_string(st.st_uid);
  if ((st.st_mode & 077) != 0)
    return "its directory is open to other users (mode " + octal_mode(st.st_mode) + ")";
  return "";
}

std::string untrusted_socket_reason(const struct stat& st, uid_t uid) {
  if (!S_ISSOCK(st.st_mode)) return "it is not a socket";
  if (st.st_uid != uid) return "the socket belongs to uid " + std::to_string(st.st_uid);
  return "";
}

std::string stale_session_fix() {
  return "Run `unset VIGIL_SESSION VIGIL_SESSION_PID` to run commands on their own, or start a "
         "session with `eval \"$(vigil session start)\"`";
}

Result<std::string> make_session_socket_dir(const char* xdg_runtime_dir, const char* xdg_state_home,
                                            const char* home) {
  std::string parent;
  if (private_dir_of_ours(xdg_runtime_dir)) {
    parent = xdg_runtime_dir;
  } else {
    // Never a shared directory: the user's state directory, which only they can create.
    auto state = vigil_state_dir(xdg_state_home, home);
    VIGIL_TRY(state);
    parent = *state + "/run";
    // mkdir -p 0700, then <state>/vigil and <state>/vigil/run checked as the log's are.
    if (auto r = prepare_log_dir(parent + "/" + kSessionSocketName); !r) {
      return make_error(Errc::kRefused,
                        "no private directory for the session's socket (" + r.error().message +
                            "); set XDG_RUNTIME_DIR to a directory of yours with mode 0700");
    }
  }
  std::string templ = parent + "/vigil-session-XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr)
    return system_error("cannot create a directory in " + escape_text(parent));
  return templ;  // mkdtemp: mode 0700
}

Result<UniqueFd> bind_session_socket(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    return make_error(Errc::kRefused, "socket path too long: " + escape_text(path) +
                                          "; set XDG_RUNTIME_DIR to a shorter directory of "
                                          "yours with mode 0700");
  }
  path.copy(addr.sun_path, path.size());
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return system_error("socket");
  const mode_t old = ::umask(0177);  // the socket: 0600
  const int rc = ::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::umask(old);
  if (rc != 0) return system_error("cannot bind " + escape_text(path));
  return fd;
}

std::optional<pid_t> session_pid_from_env(const std::string& handle) {
  const char* session = std::getenv("VIGIL_SESSION");
  if (session == nullptr || handle != session) return std::nullopt;
  const char* v = std::getenv("VIGIL_SESSION_PID");
  if (v == nullptr || *v == '\0') return std::nullopt;
  char* end = nullptr;
  const long pid = std::strtol(v, &end, 10);
  if (*end != '\0' || pid <= 0) return std::nullopt;
  return static_cast<pid_t>(pid);
}

Result<UniqueFd> connect_to_session(const std::string& handle, std::optional<pid_t> expected_pid) {
  const auto slash = handle.rfind('/');
  if (handle.empty() || handle[0] != '/' || slash == 0 || slash + 1 >= handle.size())
    return refused(handle, "VIGIL_SESSION is not an absolute socket path");
  const std::string dir = handle.substr(0, slash);
  const std::string name = handle.substr(slash + 1);
  UniqueFd dfd(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dfd) {
    const int err = errno;
    if (err == ENOENT) {
      return make_error(Errc::kNotFound, "cannot reach the vigil session at " + escape_text(handle) +
                                             ": it has ended. " + stale_session_fix());
    }
    if (err == ELOOP || err == ENOTDIR) return refused(handle, "its directory is not a real directory");
    return system_error("cannot open the directory of the vigil session at " + escape_text(handle), err);
  }
  const uid_t me = ::geteuid();
  struct stat st {};
  if (::fstat(dfd.get(), &st) != 0) return system_error("cannot stat " + escape_text(dir));
  if (auto why = untrusted_dir_reason(st, me); !why.empty()) return refused(handle, why);
  if (::fstatat(dfd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) {
      return make_error(Errc::kNotFound, "cannot reach the vigil session at " + escape_text(handle) +
                                             ": it has ended. " + stale_session_fix());
    }
    return system_error("cannot stat " + escape_text(handle));
  }
  if (auto why = untrusted_socket_reason(st, me); !why.empty()) return refused(handle, why);
  // Through the directory just checked: a name swapped since cannot be the one reached.
  const std::string via = "/proc/self/fd/" + std::to_string(dfd.get()) + "/" + name;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (via.size() >= sizeof addr.sun_path)
    return refused(handle, "VIGIL_SESSION's socket name is too long");
  via.copy(addr.sun_path, via.size());
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return system_error("socket");
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    return make_error(Errc::kNotFound, "cannot reach the vigil session at " + escape_text(handle) +
                                           " (" + std::strerror(errno) + "; it has ended?). " +
                                           stale_session_fix());
  }
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
    return system_error("SO_PEERCRED on the session's socket");
  if (cred.uid != me) {
    return refused(handle, "the process listening there is uid " + std::to_string(cred.uid));
  }
  if (expected_pid && cred.pid != *expected_pid) {
    return refused(handle, "the process listening there is pid " + std::to_string(cred.pid) +
                               ", not VIGIL_SESSION_PID " + std::to_string(*expected_pid));
  }
  return fd;
}

}  // namespace vigil
