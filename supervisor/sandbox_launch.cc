#include "supervisor/sandbox_launch.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "supervisor/core/exit_codes.h"

namespace vigil {
namespace {

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

sigset_t handled_set() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : kForwarded) sigaddset(&set, s);
  sigaddset(&set, SIGCHLD);
  return set;
}

// Restores the signal mask on scope exit.
class SignalBlock {
 public:
  SignalBlock() {
    const sigset_t set = handled_set();
    sigprocmask(SIG_BLOCK, &set, &old_);
  }
  ~SignalBlock() { sigprocmask(SIG_SETMASK, &old_, nullptr); }
  const sigset_t& old() const { return old_; }

 private:
  sigset_t old_;
};

Result<UniqueFd> sealed_memfd(const std::string& data) {
  UniqueFd fd(::memfd_create("vigil-bwrap-args", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd) return system_error("memfd_create");
  size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = ::write(fd.get(), data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return system_error("writing the bwrap argv");
    }
    off += static_cast<size_t>(n);
  }
  // Sealed so nothing (not even a process sharing the fd) can change the argv after we
  // built it.
  if (::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) !=
      0) {
    return system_error("sealing the bwrap argv");
  }
  if (::lseek(fd.get(), 0, SEEK_SET) != 0) return system_error("lseek");
  return fd;
}

int status_to_exit(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return exit_code_for_signal(WTERMSIG(status));
  return to_int(ExitCode::kSandboxSetup);
}

struct WaitOutcome {
  int status = 0;
  bool have_exit_code = false;
  int exit_code = 0;
};

// Consumes the complete JSON lines bwrap wrote to --json-status-fd: "child-pid" (the
// sandbox's init) and "exit-code" (the command's status). bwrap is trusted, but a line
// that does not parse is skipped rather than fatal.
void parse_status_lines(std::string* buf, pid_t* init_pid, WaitOutcome* out) {
  size_t nl;
  while ((nl = buf->find('\n')) != std::string::npos) {
    auto j = nlohmann::json::parse(buf->substr(0, nl), nullptr, false);
    buf->erase(0, nl + 1);
    if (!j.is_object()) continue;
    if (auto it = j.find("child-pid"); it != j.end() && it->is_number_integer()) {
      *init_pid = it->get<pid_t>();
    }
    if (auto it = j.find("exit-code"); it != j.end() && it->is_number_integer()) {
      out->have_exit_code = true;
      out->exit_code = it->get<int>();
    }
  }
}

// Splits what a pipe delivers into lines; a line longer than `max` is cut and flagged
// by the consumer (the events pipe carries untrusted text).
struct LineReader {
  int fd = -1;
  bool open = false;
  std::string buf;
  // Reads what is there; returns false at EOF or error.
  bool read_some() {
    char chunk[65536];
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n > 0) {
      buf.append(chunk, static_cast<size_t>(n));
      return true;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return true;
    open = false;
    return false;
  }
  template <class F>
  void take_lines(F&& f) {
    size_t start = 0, nl;
    while ((nl = buf.find('\n', start)) != std::string::npos) {
      f(std::string_view(buf).substr(start, nl - start));
      start = nl + 1;
    }
    buf.erase(0, start);
  }
};

// Waits for `child`, forwarding signals. When `status_fd` is valid, reads bwrap's JSON
// status lines from it: "child-pid" (the sandbox init) and "exit-code". Event lines from
// `events_fd` go to `on_event` as they arrive, and to the end of the pipe after exit.
Result<WaitOutcome> wait_forwarding(pid_t child, int status_fd, int events_fd,
                                    const std::function<void(std::string_view)>& on_event) {
  const sigset_t set = handled_set();
  UniqueFd sfd(::signalfd(-1, &set, SFD_CLOEXEC));
  if (!sfd) return system_error("signalfd");
  WaitOutcome out;
  pid_t init_pid = -1;
  LineReader status{status_fd, status_fd >= 0, {}};
  LineReader events{events_fd, events_fd >= 0, {}};
  auto drain_status = [&] {
    status.buf += '\n';  // parse_status_lines wants complete lines; harmless if empty
    parse_status_lines(&status.buf, &init_pid, &out);
  };
  while (true) {
    pollfd fds[3] = {{sfd.get(), POLLIN, 0},
                     {status.open ? status.fd : -1, POLLIN, 0},
                     {events.open ? events.fd : -1, POLLIN, 0}};
    if (::poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      return system_error("poll");
    }
    if (fds[1].revents != 0 && status.read_some()) parse_status_lines(&status.buf, &init_pid, &out);
    if (fds[2].revents != 0) {
      events.read_some();
      events.take_lines(on_event);
    }
    if (fds[0].revents == 0) continue;
    signalfd_siginfo si{};
    if (::read(sfd.get(), &si, sizeof si) != sizeof si) continue;
    const int sig = static_cast<int>(si.ssi_signo);
    if (sig != SIGCHLD) {
      if (init_pid > 0) {
        // vigil-init (the sandbox's PID 1) handles these and passes them on.
        ::kill(init_pid, sig);
      } else if (status_fd < 0) {
        ::kill(child, sig);  // unconfined: the child is the command
      }
      continue;
    }
    int wstatus = 0;
    if (::waitpid(child, &wstatus, WNOHANG) != child) continue;
    // Everything that could write is gone: read both pipes to their end.
    while (status.open && status.read_some()) {
    }
    drain_status();
    if (events.open) {
      ::fcntl(events.fd, F_SETFL, ::fcntl(events.fd, F_GETFL) & ~O_NONBLOCK);
      while (events.open && events.read_some()) events.take_lines(on_event);
      events.take_lines(on_event);
    }
    out.status = wstatus;
    return out;
  }
}

}  // namespace

Result<EventPipe> make_event_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return system_error("pipe2");
  EventPipe p{UniqueFd(fds[0]), UniqueFd(fds[1])};
  ::fcntl(p.read.get(), F_SETFL, O_NONBLOCK);
  // A larger pipe: fewer times the observer has to wait for us.
  ::fcntl(p.write.get(), F_SETPIPE_SZ, 1 << 20);
  return p;
}

Result<StatusPipe> make_status_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return system_error("pipe2");
  StatusPipe p{UniqueFd(fds[0]), UniqueFd(fds[1])};
  // The read end is non-blocking: we drain it after bwrap exits.
  ::fcntl(p.read.get(), F_SETFL, O_NONBLOCK);
  return p;
}

Result<LaunchResult> launch_bwrap(const std::string& bwrap_path, const std::vector<BwrapArg>& args,
                                  StatusPipe status, EventPipe* events,
                                  const std::function<void(std::string_view)>& on_event) {
  auto memfd = sealed_memfd(serialize_options_for_args_fd(args));
  if (!memfd) return std::move(memfd).error();
  const std::string fd_arg = std::to_string(memfd->get());
  std::vector<const char*> argv = {bwrap_path.c_str(), "--args", fd_arg.c_str()};
  const std::vector<std::string> command = command_tokens(args);
  for (const auto& t : command) argv.push_back(t.c_str());
  argv.push_back(nullptr);
  SignalBlock block;
  // posix_spawn (a vfork underneath) rather than fork: vigil's address space is not
  // copied for a child that only execs, which is measurable on every command.
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  // dup2 onto itself clears FD_CLOEXEC: exactly these two fds reach bwrap.
  posix_spawn_file_actions_adddup2(&actions, memfd->get(), memfd->get());
  posix_spawn_file_actions_adddup2(&actions, status.write.get(), status.write.get());
  if (events != nullptr)
    posix_spawn_file_actions_adddup2(&actions, events->write.get(), events->write.get());
  // Its own process group: terminal signals reach vigil, which forwards them.
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setsigmask(&attr, &block.old());
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, bwrap_path.c_str(), &actions, &attr,
                               const_cast<char* const*>(argv.data()), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return system_error("cannot execute " + bwrap_path, rc);
  status.write.reset();
  if (events != nullptr) events->write.reset();  // only the sandbox holds it now: EOF = done
  auto waited = wait_forwarding(pid, status.read.get(), events != nullptr ? events->read.get() : -1,
                                on_event);
  if (!waited) return std::move(waited).error();
  if (waited->have_exit_code) return LaunchResult{waited->exit_code};
  if (WIFSIGNALED(waited->status)) {
    return LaunchResult{exit_code_for_signal(WTERMSIG(waited->status))};
  }
  return make_error(Errc::kUnsupported,
                    "the sandbox could not be set up: bwrap exited with status " +
                        std::to_string(status_to_exit(waited->status)) +
                        " before starting the command (its own message is above). Run `vigil "
                        "probe` to check bubblewrap and user namespaces");
}

Result<LaunchResult> launch_unconfined(const std::vector<std::string>& argv) {
  std::vector<const char*> cargv;
  for (const auto& a : argv) cargv.push_back(a.c_str());
  cargv.push_back(nullptr);
  SignalBlock block;
  const pid_t pid = ::fork();
  if (pid < 0) return system_error("fork");
  if (pid == 0) {
    ::setpgid(0, 0);
    sigprocmask(SIG_SETMASK, &block.old(), nullptr);
    ::execvp(cargv[0], const_cast<char* const*>(cargv.data()));
    const int code = errno == ENOENT ? to_int(ExitCode::kNotFound) : to_int(ExitCode::kCannotExec);
    const char msg[] = "vigil: cannot execute the command\n";
    (void)!::write(2, msg, sizeof msg - 1);
    ::_exit(code);
  }
  auto waited = wait_forwarding(pid, -1, -1, [](std::string_view) {});
  if (!waited) return std::move(waited).error();
  return LaunchResult{status_to_exit(waited->status)};
}

}  // namespace vigil
