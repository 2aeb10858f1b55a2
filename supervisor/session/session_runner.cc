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

#include "supervisor/core/base/diagnostics.h"
#include "supervisor/log/log_retention.h"
#include "supervisor/session/sandboxed_command.h"
#include "supervisor/log/session_log.h"
#include "supervisor/session/session_record.h"

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

// `vigil run`'s log: a file of its own, session.start to session.end (SessionRecord).
class StandaloneSink final : public CommandLogSink {
 public:
  StandaloneSink(const SessionRequest& request, const SessionCallbacks& callbacks,
                 std::string session_id, std::string cwd)
      : start_{request.log_path,   std::move(session_id), "bwrap",
               nullptr,            request.command,       std::move(cwd),
               callbacks.on_event, {}} {}
  // A file we created but never opened (a failure in between) is removed: no empty log
  // is left behind, and never one that was there before (reserve() creates with O_EXCL).
  ~StandaloneSink() override {
    if (reserved_ && !record_) ::unlink(reserved_->path.c_str());
  }

  Result<std::string> log_path(const PreparedSandbox& prepared) override {
    start_.policy = &prepared.policy;
    keep_ = prepared.policy.vigil.log_keep;
    auto path = SessionRecord::log_path_for(start_);
    if (path) path_ = *path;
    return path;
  }
  Result<void> create_now() override {
    auto r = SessionRecord::reserve(start_);
    VIGIL_TRY(r);
    reserved_ = std::move(r).value();
    return {};
  }
  Result<CommandRecord*> open(const PreparedSandbox&) override {
    auto opened = SessionRecord::open(std::move(*reserved_), std::move(start_));
    VIGIL_TRY(opened);
    record_ = std::move(opened).value();
    return record_.get();
  }

  SessionRecord* record() { return record_.get(); }
  const std::string& path() const { return path_; }
  // vigil.log.keep, for the default log directory only (a --log path is the caller's).
  std::optional<std::uint64_t> keep() const {
    return start_.log_path ? std::nullopt : keep_;
  }

 private:
  std::optional<std::uint64_t> keep_;
  SessionRecord::Start start_;
  std::string path_;
  std::optional<SessionLog::Reserved> reserved_;
  std::unique_ptr<SessionRecord> record_;
};

}  // namespace

Result<SessionOutcome> run_session(const SessionRequest& request,
                                   const SessionCallbacks& callbacks) {
  if (request.command.empty()) return make_error(Errc::kInvalidPolicy, "no command to run");
  if (const char* nested = std::getenv("VIGIL_SANDBOX"); nested != nullptr && *nested != '\0') {
    return make_error(Errc::kRefused,
                      "vigil run inside a vigil sandbox is not supported: this command is "
                      "already confined by the outer session, and that sandbox denies what a "
                      "second one needs (a session directory outside the writable roots, new "
                      "mounts and namespaces). Run the inner command directly");
  }
  auto cwd = request.cwd ? Result<std::string>(*request.cwd) : current_dir();
  VIGIL_TRY(cwd);
  SandboxedCommand cmd;
  cmd.command = request.command;
  cmd.cwd = *cwd;
  cmd.settings = request.settings;
  cmd.allow_writable_settings = request.allow_writable_settings;
  cmd.capture_output = request.capture_output;
  cmd.annotate_stderr = request.annotate_stderr;
  cmd.proxy_test = request.proxy_test;
  SessionOutcome outcome;
  outcome.session_id = new_session_id();
  cmd.quarantine_id = outcome.session_id;
  cmd.violations_json = request.violations_json;
  cmd.timeout_s = request.timeout_s;
  StandaloneSink sink(request, callbacks, outcome.session_id, *cwd);
  // Forwarded signals wake a default writer that waits for a reader (SignalRelay,
  // sandbox_launch.cc): vigil ends with the command even when nobody reads its output.
  UniqueFd interrupted(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!interrupted) return system_error("eventfd");
  cmd.interrupted_fd = interrupted.get();
  const int stop_fd = interrupted.get();
  // 2>&1 into vigil: the command gets one pipe for both, so the order is its own.
  cmd.merge_output = !callbacks.on_output && same_open_file(STDOUT_FILENO, STDERR_FILENO);
  auto forward =
      callbacks.on_output
          ? callbacks.on_output
          : [stop_fd](OutputStream s, std::string_view bytes) {
              return write_all_to(s == OutputStream::kStdout ? STDOUT_FILENO : STDERR_FILENO, bytes,
                                  stop_fd);
            };
  auto ran = run_sandboxed(cmd, sink, forward);
  VIGIL_TRY(ran);
  outcome.log_path = sink.path();
  outcome.exit_code = ran->exit_code;
  outcome.annotation = std::move(ran->annotation);
  outcome.violations_json = std::move(ran->violations_json);
  auto counters = sink.record()->end(outcome.exit_code, ran->limit);
  if (!counters) {
    print_warning(counters.error().message);
  } else {
    outcome.counters = std::move(counters).value();
  }
  if (const auto keep = sink.keep(); keep && !outcome.log_path.empty()) {
    const auto slash = outcome.log_path.rfind('/');
    std::size_t failed = 0;
    prune_logs(outcome.log_path.substr(0, slash), *keep, outcome.log_path.substr(slash + 1),
               &failed);
    if (failed != 0)
      print_warning("vigil.log.keep: " + std::to_string(failed) +
                    " old session logs could not be removed from " +
                    outcome.log_path.substr(0, slash));
  }
  return outcome;
}

}  // namespace vigil
