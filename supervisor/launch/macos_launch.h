// The macOS launch (the counterpart of sandbox_launch.h on Linux): processes spawned with
// only the fds they are given (POSIX_SPAWN_CLOEXEC_DEFAULT) in their own process group,
// the wait that forwards SIGINT, SIGTERM, SIGHUP and SIGQUIT through kqueue, and `log
// stream`, whose Seatbelt reports are the session's witness. The session's use of them is
// supervisor/orchestrator/seatbelt_backend.cc.
//
// BUILT ONLY ON APPLE and NEVER COMPILED by the Linux CI (tools/check_macos_syntax.sh
// parses it).
#pragma once

#include <errno.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seatbelt/log_parser.h"
#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/core/events/event_schema.h"

namespace vigil::macos {

// environ with `extra` set (replacing any existing value of the same name).
std::vector<std::string> merged_environment(
    const std::vector<std::pair<std::string, std::string>>& extra);

struct Spawned {
  pid_t pid = -1;
};

// posix_spawnp with only fds 0-2 and the `dups` ({from, to}), its own process group,
// the forwarded signals back to default and nothing blocked. `spawn_errno` gets the
// failure's errno (ENOENT: the command does not exist).
Result<Spawned> spawn(const std::vector<std::string>& argv, std::vector<std::string> env,
                      const std::vector<std::pair<int, int>>& dups, int* spawn_errno = nullptr);

// `log stream` for this session, its stdout+stderr on a pipe we read line by line.
class LogStream {
 public:
  static Result<LogStream> start(const std::string& tag);
  LogStream() = default;
  LogStream(LogStream&& o) noexcept
      : read_(std::move(o.read_)), pid_(std::exchange(o.pid_, -1)), splitter_(o.splitter_) {}
  ~LogStream() { stop(); }

  int fd() const { return read_.get(); }

  // Reads what is there; each complete line goes to on_line. False at EOF.
  template <class F>
  bool pump(F&& on_line) {
    char buf[16 * 1024];
    for (;;) {
      const ssize_t n = ::read(read_.get(), buf, sizeof buf);
      if (n > 0) {
        splitter_.feed(std::string_view(buf, static_cast<std::size_t>(n)), on_line);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      return n < 0;  // EAGAIN: open, nothing more now; 0: EOF
    }
  }

  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }

 private:
  UniqueFd read_;
  pid_t pid_ = -1;
  events::LineSplitter splitter_{kMaxLogLineBytes};
};

// Waits up to `limit` for `log stream`'s first line (its banner, "Filtering the log data
// using ..."). Anything else first is its error message ("Must be admin ...").
Result<void> await_banner(LogStream& log, std::chrono::milliseconds limit,
                          const std::function<void(std::string_view)>& on_line);

struct Waited {
  int status = 0;
};

// Runs until `pid` exits: forwards the signals, feeds the log stream meanwhile. With
// `kill_group`, the command's process group is killed before the command is reaped:
// until then its pid (the group's id) cannot be reused, so the kill cannot reach a
// stranger's group.
Result<Waited> wait_forwarding(pid_t pid, LogStream* log,
                               const std::function<void(std::string_view)>& on_line,
                               bool kill_group);

// Reports reach `log stream` asynchronously: read until it has been quiet for `quiet`
// (or `limit` passed), then stop it and read what is left.
void drain(LogStream& log, std::chrono::milliseconds quiet, std::chrono::milliseconds limit,
           const std::function<void(std::string_view)>& on_line);

// The forwarded signals ignored in vigil (kqueue still records them: EVFILT_SIGNAL sees
// even ignored signals) while a command runs, or back to their default.
void ignore_forwarded_signals(bool ignore);

}  // namespace vigil::macos
