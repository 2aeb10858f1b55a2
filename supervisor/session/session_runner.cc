// run_session(): one command in its sandbox (run_sandboxed) with a log of its own.
#include "supervisor/session/session_runner.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>

#include "supervisor/session/sandboxed_command.h"
#include "supervisor/session/session_orchestrator.h"

namespace vigil {

std::string find_bwrap(const std::optional<std::string>& configured) {
  if (configured) return ::access(configured->c_str(), X_OK) == 0 ? *configured : std::string();
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr && *path != '\0' ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty() || dir[0] != '/') continue;  // a relative PATH entry could be planted
    const std::string candidate = dir + "/bwrap";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

bool write_all_to(int fd, std::string_view bytes, int stop_fd) {
  // A reader that went away must cost an EPIPE here, never the process: an embedder may
  // keep SIGPIPE's default. SIGPIPE for a write is sent to the writing thread, so it is
  // blocked in this thread for the write, and one the write raised is taken back before
  // the old mask returns (unless one was already pending: that one is not ours).
  sigset_t pipe_only, old;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
  sigset_t pending;
  sigpending(&pending);
  const bool already_pending = sigismember(&pending, SIGPIPE) == 1;
  // With a stop_fd, a write never blocks for good: it waits for room (POLLOUT, or the
  // stop) and writes at most what room guarantees (PIPE_BUF) to anything that can fill
  // up; a regular file takes it all.
  struct stat st {};
  const bool bounded = stop_fd >= 0 && ::fstat(fd, &st) == 0 && !S_ISREG(st.st_mode);
  bool ok = true;
  while (!bytes.empty()) {
    if (bounded) {
      pollfd p[2] = {{fd, POLLOUT, 0}, {stop_fd, POLLIN, 0}};
      if (::poll(p, 2, -1) < 0 && errno != EINTR) {
        ok = false;
        break;
      }
      if (p[0].revents == 0) {
        if (p[1].revents == 0) continue;
        ok = false;  // no room, and the command was signalled: nobody reads this
        break;
      }
    }
    const std::size_t step = bounded ? std::min<std::size_t>(bytes.size(), PIPE_BUF) : bytes.size();
    const ssize_t n = ::write(fd, bytes.data(), step);
    if (n > 0) {
      bytes.remove_prefix(static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN) {
      pollfd p[2] = {{fd, POLLOUT, 0}, {stop_fd, POLLIN, 0}};  // a non-blocking fd: wait for room
      (void)::poll(p, stop_fd >= 0 ? 2 : 1, -1);
    } else {
      if (n < 0 && errno == EPIPE && !already_pending) {
        const timespec now{0, 0};
        while (::sigtimedwait(&pipe_only, nullptr, &now) < 0 && errno == EINTR) {
        }
      }
      ok = false;  // EPIPE (the reader is gone), EBADF, ...
      break;
    }
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return ok;
}

namespace {

// Linux's part of a session (session_orchestrator.h): bwrap, vigil-init and the
// observer, by run_sandboxed(), with the output captured or inherited as asked.
class BwrapBackend final : public SessionBackend {
 public:
  std::string_view name() const override { return "bwrap"; }
  Result<SandboxedOutcome> run(SandboxedCommand& cmd, CommandLogSink& sink,
                               const SessionCallbacks& callbacks) override {
    // Forwarded signals wake a default writer that waits for a reader (SignalRelay,
    // sandbox_launch.cc): vigil ends with the command even when nobody reads its output.
    UniqueFd interrupted(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!interrupted) return system_error("eventfd");
    cmd.interrupted_fd = interrupted.get();
    const int stop_fd = interrupted.get();
    // 2>&1 into vigil: the command gets one pipe for both, so the order is its own.
    cmd.merge_output = !callbacks.on_output && same_open_file(STDOUT_FILENO, STDERR_FILENO);
    auto forward = callbacks.on_output
                       ? callbacks.on_output
                       : [stop_fd](OutputStream s, std::string_view bytes) {
                           return write_all_to(
                               s == OutputStream::kStdout ? STDOUT_FILENO : STDERR_FILENO, bytes,
                               stop_fd);
                         };
    return run_sandboxed(cmd, sink, forward);
  }
};

}  // namespace

Result<SessionOutcome> run_session(const SessionRequest& request,
                                   const SessionCallbacks& callbacks) {
  BwrapBackend backend;
  return orchestrate_session(request, callbacks, backend);
}

}  // namespace vigil
