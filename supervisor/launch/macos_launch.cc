#include "supervisor/launch/macos_launch.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/event.h>

#include <cstdio>
#include <cstdlib>

#include "seatbelt/sandbox_exec_argv.h"
#include "supervisor/core/base/pipe.h"
#include "supervisor/launch/forwarded_signals.h"

extern char** environ;

namespace vigil::macos {
namespace {

using Clock = std::chrono::steady_clock;

// The forwarded signals (forwarded_signals.h) are ignored in vigil (kqueue still records
// them: EVFILT_SIGNAL sees even ignored signals) and reset to default in the children.

std::vector<char*> c_array(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

std::vector<std::string> merged_environment(
    const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view kv(*e);
    const std::string_view name = kv.substr(0, kv.find('='));
    bool replaced = false;
    for (const auto& [k, v] : extra) replaced = replaced || name == k;
    if (!replaced) out.emplace_back(kv);
  }
  for (const auto& [k, v] : extra) out.push_back(k + "=" + v);
  return out;
}

Result<Spawned> spawn(const std::vector<std::string>& argv, std::vector<std::string> env,
                      const std::vector<std::pair<int, int>>& dups, int* spawn_errno) {
  std::vector<std::string> args = argv;
  auto cargv = c_array(args);
  auto cenv = c_array(env);
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  for (const auto& [from, to] : dups) posix_spawn_file_actions_adddup2(&fa, from, to);
  for (int fd = 0; fd <= 2; ++fd) {
    bool redirected = false;
    for (const auto& d : dups) redirected = redirected || d.second == fd;
    if (!redirected) posix_spawn_file_actions_addinherit_np(&fa, fd);
  }
  sigset_t defaults, none;
  sigemptyset(&defaults);
  for (const int s : kForwardedSignals) sigaddset(&defaults, s);
  sigaddset(&defaults, SIGPIPE);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setpgroup(&attr, 0);
  // CLOEXEC_DEFAULT (Apple): every fd not named in the file actions is closed in the
  // child, so nothing of vigil's (the session log, proxy sockets) reaches the sandbox.
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
                                      POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_CLOEXEC_DEFAULT);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, args[0].c_str(), &fa, &attr, cargv.data(), cenv.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (spawn_errno != nullptr) *spawn_errno = rc;
  if (rc != 0) return system_error("cannot execute " + args[0], rc);
  return Spawned{pid};
}

Result<LogStream> LogStream::start(const std::string& tag) {
  auto argv = log_stream_argv(tag);
  VIGIL_TRY(argv);
  auto pipe = make_pipe();
  VIGIL_TRY(pipe);
  LogStream s;
  s.read_ = std::move(pipe->read);
  UniqueFd write = std::move(pipe->write);
  UniqueFd null(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (!null) return system_error("open /dev/null");
  auto child =
      spawn(*argv, merged_environment({}), {{null.get(), 0}, {write.get(), 1}, {write.get(), 2}});
  VIGIL_TRY(child);
  s.pid_ = child->pid;
  ::fcntl(s.read_.get(), F_SETFL, O_NONBLOCK);
  return s;
}

Result<void> await_banner(LogStream& log, std::chrono::milliseconds limit,
                          const std::function<void(std::string_view)>& on_line) {
  const auto deadline = Clock::now() + limit;
  bool got = false;
  std::string first;
  auto take = [&](std::string_view line) {
    if (!got) {
      got = true;
      first = std::string(line.substr(0, 200));
      return;
    }
    on_line(line);
  };
  while (!got) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return make_error(Errc::kSystem, "`log stream` printed nothing");
    fd_set set;
    FD_ZERO(&set);
    FD_SET(log.fd(), &set);
    timeval tv{static_cast<time_t>(left.count() / 1000),
               static_cast<suseconds_t>((left.count() % 1000) * 1000)};
    const int rc = ::select(log.fd() + 1, &set, nullptr, nullptr, &tv);
    if (rc < 0 && errno != EINTR) return system_error("select");
    if (!log.pump(take) && !got) return make_error(Errc::kSystem, "`log stream` exited");
  }
  if (first.rfind("Filtering the log data", 0) != 0) {
    return make_error(Errc::kSystem, "`log stream` said: " + events::escape_for_terminal(first));
  }
  return {};
}

Result<Waited> wait_forwarding(pid_t pid, LogStream* log,
                               const std::function<void(std::string_view)>& on_line,
                               bool kill_group) {
  UniqueFd kq(::kqueue());
  if (!kq) return system_error("kqueue");
  bool exited = false;
  struct kevent ev;
  EV_SET(&ev, static_cast<uintptr_t>(pid), EVFILT_PROC, EV_ADD | EV_ONESHOT, NOTE_EXIT, 0, nullptr);
  if (::kevent(kq.get(), &ev, 1, nullptr, 0, nullptr) < 0) {
    if (errno != ESRCH) return system_error("kevent(EVFILT_PROC)");
    exited = true;  // already a zombie
  }
  std::vector<struct kevent> changes;
  for (const int s : kForwardedSignals) {
    EV_SET(&ev, static_cast<uintptr_t>(s), EVFILT_SIGNAL, EV_ADD, 0, 0, nullptr);
    changes.push_back(ev);
  }
  if (log != nullptr) {
    EV_SET(&ev, static_cast<uintptr_t>(log->fd()), EVFILT_READ, EV_ADD, 0, 0, nullptr);
    changes.push_back(ev);
  }
  if (::kevent(kq.get(), changes.data(), static_cast<int>(changes.size()), nullptr, 0, nullptr) <
      0) {
    return system_error("kevent");
  }
  while (!exited) {
    struct kevent got[8];
    const int n = ::kevent(kq.get(), nullptr, 0, got, 8, nullptr);
    if (n < 0 && errno != EINTR) return system_error("kevent");
    for (int i = 0; i < n; ++i) {
      if (got[i].filter == EVFILT_PROC) {
        exited = true;
      } else if (got[i].filter == EVFILT_SIGNAL) {
        ::kill(pid, static_cast<int>(got[i].ident));
      } else if (got[i].filter == EVFILT_READ && log != nullptr) {
        if (!log->pump(on_line)) {
          EV_SET(&ev, got[i].ident, EVFILT_READ, EV_DELETE, 0, 0, nullptr);
          ::kevent(kq.get(), &ev, 1, nullptr, 0, nullptr);
          log = nullptr;
        }
      }
    }
  }
  if (kill_group) ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return system_error("waitpid");
  }
  return Waited{status};
}

void drain(LogStream& log, std::chrono::milliseconds quiet, std::chrono::milliseconds limit,
           const std::function<void(std::string_view)>& on_line) {
  const auto end = Clock::now() + limit;
  bool open = true;
  while (open && Clock::now() < end) {
    fd_set set;
    FD_ZERO(&set);
    FD_SET(log.fd(), &set);
    timeval tv{0, static_cast<suseconds_t>(quiet.count() * 1000)};
    const int rc = ::select(log.fd() + 1, &set, nullptr, nullptr, &tv);
    if (rc == 0) break;  // quiet
    if (rc < 0 && errno != EINTR) break;
    open = log.pump(on_line);
  }
  log.stop();
  log.pump(on_line);  // what it wrote before exiting
}

void ignore_forwarded_signals(bool ignore) {
  for (const int s : kForwardedSignals) ::signal(s, ignore ? SIG_IGN : SIG_DFL);
}

}  // namespace vigil::macos
