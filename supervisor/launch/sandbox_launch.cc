#include "supervisor/launch/sandbox_launch.h"

#include <fcntl.h>
#include <linux/kcmp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "supervisor/core/base/diagnostics.h"
#include "supervisor/core/base/exit_codes.h"
#include "supervisor/core/base/write_all.h"
#include "supervisor/launch/launch_trace.h"

namespace vigil {
namespace {

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

// Longer than any line the observer may send (events::Limits::untrusted().max_line), so
// a cut line is always refused by the parser.
constexpr size_t kMaxEventLine = 64 * 1024;

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

int status_to_exit(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return exit_code_for_signal(WTERMSIG(status));
  return to_int(ExitCode::kSandboxSetup);
}

struct WaitOutcome {
  int status = 0;
  bool have_exit_code = false;
  int exit_code = 0;
  std::string limit;  // LaunchResult::limit
};

// Consumes the JSON lines bwrap wrote to --json-status-fd: "child-pid" (the sandbox's
// init) and "exit-code" (the command's status). bwrap terminates every line; `at_end`
// also takes an unterminated last one. bwrap is trusted, but a line that does not parse
// is skipped rather than fatal.
void parse_status_lines(std::string* buf, bool at_end, pid_t* init_pid, WaitOutcome* out) {
  auto take = [&](std::string_view line) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object()) return;
    if (auto it = j.find("child-pid"); it != j.end() && it->is_number_integer()) {
      *init_pid = it->get<pid_t>();
    }
    if (auto it = j.find("exit-code"); it != j.end() && it->is_number_integer()) {
      out->have_exit_code = true;
      out->exit_code = it->get<int>();
    }
  };
  size_t start = 0, nl;
  while ((nl = buf->find('\n', start)) != std::string::npos) {
    take(std::string_view(*buf).substr(start, nl - start));
    start = nl + 1;
  }
  buf->erase(0, start);
  if (at_end && !buf->empty()) {
    take(*buf);
    buf->clear();
  }
}

// One pipe the supervisor reads while the command runs. Reads are non-blocking until
// the command has exited, then blocking to the end (everything that could write is gone:
// the sandbox's PID namespace dies with its init).
struct PipeReader {
  UniqueFd fd;
  std::string buf;
  bool open() const { return static_cast<bool>(fd); }
  // Appends what is there to `buf`; closes at EOF or on an error.
  void read_some() {
    char chunk[65536];
    const ssize_t n = ::read(fd.get(), chunk, sizeof chunk);
    if (n > 0) {
      buf.append(chunk, static_cast<size_t>(n));
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
      fd.reset();
    }
  }
  void set_blocking() {
    if (fd) ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  }
  // Hands each complete line to f. The events pipe carries untrusted text: a line longer
  // than `max_line` is handed over cut at that length (the consumer's parser refuses it
  // as malformed, so it is counted) and the rest of it, up to its newline, is skipped,
  // so the buffer stays bounded whatever the sandbox writes.
  template <class F>
  void take_lines(F&& f, size_t max_line) {
    size_t start = 0, nl;
    while ((nl = buf.find('\n', start)) != std::string::npos) {
      if (!skipping) f(std::string_view(buf).substr(start, nl - start));
      skipping = false;
      start = nl + 1;
    }
    buf.erase(0, start);
    if (buf.size() > max_line) {
      if (!skipping) f(std::string_view(buf).substr(0, max_line + 1));
      skipping = true;
      buf.clear();
    }
  }
  bool skipping = false;  // inside an overlong line, until its newline
};

// The pipes one wait loop serves.
struct Pipes {
  PipeReader status;
  PipeReader events;
  PipeReader out;
  PipeReader err;
};

// Forwards what the command's stdout/stderr pipe delivered; closes the pipe when the
// destination is gone, so that the command gets EPIPE as it would have without us.
void pass_output(PipeReader& r, OutputStream which, const LaunchIo& io) {
  if (r.buf.empty()) return;
  const bool keep = io.on_output(which, r.buf);
  r.buf.clear();
  if (!keep) r.fd.reset();
}

// Signals are taken and forwarded on a thread of their own, whatever the wait loop is
// doing: it may be blocked handing output to a reader that does not read (a harness that
// stopped reading), and SIGTERM must still reach the command. After forwarding, it writes
// to the caller's `interrupted_fd`, so an output writer waiting for room gives up and
// vigil ends with the command.
class SignalRelay {
 public:
  explicit SignalRelay(int interrupted_fd) : interrupted_fd_(interrupted_fd) {}
  SignalRelay(const SignalRelay&) = delete;
  SignalRelay& operator=(const SignalRelay&) = delete;
  ~SignalRelay() {
    if (!thread_.joinable()) return;
    const std::uint64_t one = 1;
    (void)!::write(stop_.get(), &one, sizeof one);
    thread_.join();
  }
  // The calling thread has the signals blocked (SignalBlock); the thread inherits that.
  Result<void> start() {
    const sigset_t set = handled_set();
    sfd_.reset(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
    if (!sfd_) return system_error("signalfd");
    stop_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!stop_) return system_error("eventfd");
    thread_ = std::thread([this] { run(); });
    return {};
  }
  // Where forwarded signals go: vigil-init (the sandbox's PID 1, which passes them on), or
  // the command itself when unconfined. A signal that comes before the target is known
  // is kept and delivered here (a SIGTERM sent as soon as the command is up was once
  // dropped, leaving vigil and the command running).
  void set_target(pid_t pid) {
    target_.store(pid);
    deliver_pending(pid);
  }

 private:
  void run() {
    while (true) {
      pollfd fds[2] = {{sfd_.get(), POLLIN, 0}, {stop_.get(), POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0 && errno != EINTR) return;
      if (fds[1].revents != 0) return;
      signalfd_siginfo si{};
      if (::read(sfd_.get(), &si, sizeof si) != sizeof si) continue;
      const int sig = static_cast<int>(si.ssi_signo);
      if (sig == SIGCHLD || sig <= 0 || sig >= 32) continue;  // the child's end: its pidfd
      const pid_t target = target_.load();
      if (target > 0) {
        forward(target, sig);
        continue;
      }
      // Kept for set_target(); looked at again in case it ran meanwhile (whichever of the
      // two takes the bit delivers it, exactly once).
      pending_.fetch_or(1U << sig);
      if (const pid_t now = target_.load(); now > 0) deliver_pending(now);
    }
  }
  void deliver_pending(pid_t pid) {
    const std::uint32_t pending = pending_.exchange(0);
    for (int sig = 1; sig < 32; ++sig)
      if ((pending & (1U << sig)) != 0) forward(pid, sig);
  }
  void forward(pid_t pid, int sig) {
    ::kill(pid, sig);
    if (interrupted_fd_ >= 0) {
      const std::uint64_t one = 1;
      (void)!::write(interrupted_fd_, &one, sizeof one);
    }
  }
  std::atomic<std::uint32_t> pending_{0};
  int interrupted_fd_;
  UniqueFd sfd_, stop_;
  std::atomic<pid_t> target_{-1};
  std::thread thread_;
};

// Waits for `child`, forwarding signals. bwrap's status lines give the sandbox's init
// (signals go there) and the command's exit code; event lines and output chunks are
// passed on as they arrive, and to the end of their pipes after the exit.
Result<WaitOutcome> wait_forwarding(pid_t child, Pipes& p, const LaunchIo& io) {
  const bool confined = p.status.open();
  SignalRelay relay(io.interrupted_fd);
  VIGIL_TRY_VOID(relay.start());
  if (!confined) relay.set_target(child);  // unconfined: the child is the command
  // The child's exit is watched through a pidfd, not only SIGCHLD: in an embedder with
  // other threads, a SIGCHLD may be taken (and, at its default disposition, discarded) by
  // a thread that does not block it, and the signalfd would never see it. Kernels before
  // 5.3 have no pidfd: then the loop also looks every 100 ms.
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, child, 0)));
  const int poll_timeout_ms =
      io.check_limits && io.check_every_ms >= 0 ? (pidfd ? io.check_every_ms
                                                         : std::min(io.check_every_ms, 100))
                                                : (pidfd ? -1 : 100);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(io.timeout_ms);
  WaitOutcome out;
  pid_t init_pid = -1;
  const auto check_every = std::chrono::milliseconds(std::max(io.check_every_ms, 0));
  auto next_check = std::chrono::steady_clock::now();
  auto pass_all = [&] {
    parse_status_lines(&p.status.buf, false, &init_pid, &out);
    if (init_pid > 0) relay.set_target(init_pid);
    if (io.hold_records) io.hold_records(true);
    p.events.take_lines(io.on_event_line, kMaxEventLine);
    pass_output(p.out, OutputStream::kStdout, io);
    pass_output(p.err, OutputStream::kStderr, io);
    if (io.hold_records) io.hold_records(false);
  };
  // The launch check has read bwrap's first status line already (it stays in the
  // buffer): the target is known before the first wait, not at the first wake.
  pass_all();
  while (true) {
    PipeReader* readers[] = {&p.status, &p.events, &p.out, &p.err};
    pollfd fds[5];
    for (size_t i = 0; i < 4; ++i)
      fds[i] = {readers[i]->open() ? readers[i]->fd.get() : -1, POLLIN, 0};
    fds[4] = {pidfd ? pidfd.get() : -1, POLLIN, 0};
    int wait_ms = poll_timeout_ms;
    // A cap was hit: the sandbox's PID 1 takes its whole PID namespace with it; before
    // bwrap has said which pid that is, bwrap itself (--die-with-parent reaches the rest).
    auto end_sandbox = [&](std::string limit) {
      out.limit = std::move(limit);
      ::kill(init_pid > 0 ? init_pid : child, SIGKILL);
      if (init_pid <= 0) ::kill(child, SIGKILL);
    };
    if (io.timeout_ms >= 0 && out.limit.empty()) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(
                            deadline - std::chrono::steady_clock::now())
                            .count();
      if (left <= 0) {
        end_sandbox("timeout");
        wait_ms = poll_timeout_ms;
      } else {
        wait_ms = wait_ms < 0 ? static_cast<int>(left)
                              : std::min(wait_ms, static_cast<int>(left));
      }
    }
    if (::poll(fds, 5, wait_ms) < 0) {
      if (errno == EINTR) continue;
      return system_error("poll");
    }
    for (size_t i = 0; i < 4; ++i) {
      if (fds[i].revents != 0) readers[i]->read_some();
    }
    pass_all();
    // The caps every check_every_ms, not on every wake: a wake per event the sandbox
    // writes would otherwise read the cgroup's counter files (or list the sandbox's /proc)
    // once per trapped call.
    if (io.check_limits && out.limit.empty() && std::chrono::steady_clock::now() >= next_check) {
      if (std::string hit = io.check_limits(init_pid); !hit.empty()) end_sandbox(std::move(hit));
      next_check = std::chrono::steady_clock::now() + check_every;
    }
    // Whatever woke us (SIGCHLD, the pidfd, a timeout, output): has the child exited?
    int wstatus = 0;
    if (::waitpid(child, &wstatus, WNOHANG) != child) continue;
    // A cap the command died of (the OOM killer) shows only now.
    if (io.check_limits && out.limit.empty()) out.limit = io.check_limits(-1);
    // Everything that could write is gone: read every pipe to its end.
    for (PipeReader* r : readers) {
      r->set_blocking();
      while (r->open()) {
        r->read_some();
        pass_all();
      }
    }
    parse_status_lines(&p.status.buf, true, &init_pid, &out);
    out.status = wstatus;
    return out;
  }
}

// The sandbox's pid, from bwrap's first status line (written before it lets the sandbox
// build its mounts); -1 when bwrap ended without one. The lines stay in the buffer for
// the wait.
Result<pid_t> await_sandbox_pid(PipeReader& status) {
  while (status.open()) {
    std::string copy = status.buf;
    pid_t pid = -1;
    WaitOutcome ignored;
    parse_status_lines(&copy, false, &pid, &ignored);
    if (pid > 0) return pid;
    pollfd fd = {status.fd.get(), POLLIN, 0};
    if (::poll(&fd, 1, -1) < 0 && errno != EINTR) return system_error("poll");
    status.read_some();
  }
  return -1;
}

// Ends a sandbox that must not be released: killed first, its --block-fd closed only
// after (EOF on it would let bwrap go on), then bwrap reaped.
void kill_unreleased(pid_t bwrap, pid_t sandbox, LaunchIo& io) {
  ::kill(sandbox > 0 ? sandbox : bwrap, SIGKILL);
  io.release->reset();
  int ignored = 0;
  while (::waitpid(bwrap, &ignored, 0) < 0 && errno == EINTR) {
  }
}

// Runs the launch check on the sandbox bwrap is building, then releases it; not
// released, it is killed.
Result<void> check_then_release(pid_t bwrap, PipeReader& status, LaunchIo& io) {
  auto sandbox = await_sandbox_pid(status);
  if (!sandbox) {
    kill_unreleased(bwrap, -1, io);
    return std::move(sandbox).error();
  }
  if (*sandbox <= 0) {
    io.release->reset();  // bwrap ended before making a sandbox: nothing to release
    return {};
  }
  DebugPhase check_timed("launch check");
  Result<void> verdict = io.before_release(*sandbox);
  check_timed.end();
  DebugPhase release_timed("release");
  if (verdict) verdict = write_all(io.release->get(), std::string_view("1"), "the sandbox's release");
  if (!verdict) {
    kill_unreleased(bwrap, *sandbox, io);
    return verdict;
  }
  io.release->reset();
  return {};
}

// A pipe for one of the command's output streams: the read end is ours (non-blocking),
// the write end becomes the command's fd 1 or 2.
Result<Pipe> make_output_pipe() {
  auto p = make_pipe();
  VIGIL_TRY(p);
  ::fcntl(p->read.get(), F_SETFL, O_NONBLOCK);
  return p;
}

}  // namespace

bool same_open_file(int a, int b) {
  const pid_t self = ::getpid();
  const long same = ::syscall(SYS_kcmp, self, self, KCMP_FILE, a, b);
  if (same == 0) return true;
  if (same > 0) return false;
  // kcmp refused (no CONFIG_KCMP, or a seccomp policy around us): the same file with the
  // same status flags is the best evidence there is.
  struct stat sa {
  }, sb{};
  if (::fstat(a, &sa) != 0 || ::fstat(b, &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino &&
         ::fcntl(a, F_GETFL) == ::fcntl(b, F_GETFL);
}

Result<Pipe> make_event_pipe() {
  auto p = make_pipe();
  VIGIL_TRY(p);
  ::fcntl(p->read.get(), F_SETFL, O_NONBLOCK);
  // A larger pipe: fewer times the observer has to wait for us.
  ::fcntl(p->write.get(), F_SETPIPE_SZ, 1 << 20);
  return p;
}

Result<Pipe> make_program_pipe() { return make_pipe(); }

Result<UniqueFd> sealed_memfd(const std::string& data, const char* what) {
  UniqueFd fd(::memfd_create(what, MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd) return system_error("memfd_create");
  VIGIL_TRY_VOID(write_all(fd.get(), data, what));
  if (::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) !=
      0) {
    return system_error(std::string("sealing ") + what);
  }
  if (::lseek(fd.get(), 0, SEEK_SET) != 0) return system_error("lseek");
  return fd;
}

Result<Pipe> make_status_pipe() {
  auto p = make_pipe();
  VIGIL_TRY(p);
  // The read end is non-blocking: we drain it after bwrap exits.
  ::fcntl(p->read.get(), F_SETFL, O_NONBLOCK);
  return p;
}

Result<LaunchResult> launch_bwrap(const std::string& bwrap_path, const std::vector<BwrapArg>& args,
                                  Pipe status, LaunchIo& io) {
  if (std::string why = bwrap_arg_count_problem(args); !why.empty())
    return make_error(Errc::kRefused, why);
  trace_bwrap_args(bwrap_path, args);
  DebugPhase spawn_timed("spawn");
  auto memfd = sealed_memfd(serialize_options_for_args_fd(args), "the bwrap argv");
  VIGIL_TRY(memfd);
  Pipes pipes;
  UniqueFd out_write, err_write;
  if (io.capture_output) {
    auto o = make_output_pipe();
    VIGIL_TRY(o);
    pipes.out.fd = std::move(o->read);
    out_write = std::move(o->write);
    if (!io.merge_output) {
      auto e = make_output_pipe();
      VIGIL_TRY(e);
      pipes.err.fd = std::move(e->read);
      err_write = std::move(e->write);
    }
  }
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
  // dup2 onto itself clears FD_CLOEXEC: exactly these fds reach bwrap.
  posix_spawn_file_actions_adddup2(&actions, memfd->get(), memfd->get());
  posix_spawn_file_actions_adddup2(&actions, status.write.get(), status.write.get());
  if (io.events != nullptr)
    posix_spawn_file_actions_adddup2(&actions, io.events->write.get(), io.events->write.get());
  for (const int fd : io.pass_fds) posix_spawn_file_actions_adddup2(&actions, fd, fd);
  if (io.stdio[0] != STDIN_FILENO) posix_spawn_file_actions_adddup2(&actions, io.stdio[0], 0);
  if (io.capture_output) {
    posix_spawn_file_actions_adddup2(&actions, out_write.get(), STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, io.merge_output ? out_write.get() : err_write.get(),
                                     STDERR_FILENO);
  } else {
    if (io.stdio[1] != STDOUT_FILENO) posix_spawn_file_actions_adddup2(&actions, io.stdio[1], 1);
    if (io.stdio[2] != STDERR_FILENO) posix_spawn_file_actions_adddup2(&actions, io.stdio[2], 2);
  }
  std::vector<char*> env;
  if (io.env != nullptr) {
    for (const auto& e : *io.env) env.push_back(const_cast<char*>(e.c_str()));
    env.push_back(nullptr);
  }
  // Its own process group: terminal signals reach vigil, which forwards them.
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setsigmask(&attr, &block.old());
  // SIGPIPE back to its default: the CLI ignores it (a closed stdout must not kill the
  // supervisor mid-log), and an ignored disposition would survive the exec.
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  if (io.enter_caps) {
    if (auto r = io.enter_caps(); !r) {
      posix_spawn_file_actions_destroy(&actions);
      posix_spawnattr_destroy(&attr);
      return std::move(r).error();
    }
  }
  const int rc = ::posix_spawn(&pid, bwrap_path.c_str(), &actions, &attr,
                               const_cast<char* const*>(argv.data()),
                               io.env != nullptr ? env.data() : environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (io.leave_caps) io.leave_caps();
  if (rc != 0) return system_error("cannot execute " + bwrap_path, rc);
  spawn_timed.end();
  if (io.on_spawned) io.on_spawned(pid);
  // Only the sandbox holds the write ends now: EOF on a pipe means everything inside
  // that could write to it is gone.
  status.write.reset();
  if (io.events != nullptr) io.events->write.reset();
  out_write.reset();
  err_write.reset();
  pipes.status.fd = std::move(status.read);
  if (io.events != nullptr) pipes.events.fd = std::move(io.events->read);
  DebugPhase after_spawn_timed("log, proxy and program while bwrap builds");
  if (io.after_spawn) {
    if (auto r = io.after_spawn(); !r) {
      // vigil-init is still waiting for its go, and the caller closed the program pipe
      // unwritten: vigil-init refuses to start the command and exits, and bwrap with it.
      // We wait for that rather than kill bwrap: killed before it has released its
      // sandbox child (an eventfd write), bwrap leaves that child blocked forever on the
      // eventfd, and no die-with-parent reaches it yet. What the sandbox prints on the way
      // out stays in the pipes (a line or two: they hold it) and is not shown; the error
      // returned is the cause.
      // Held on --block-fd, it would wait for ever: it is killed, never released unchecked.
      if (io.before_release) {
        auto sandbox = await_sandbox_pid(pipes.status);
        kill_unreleased(pid, sandbox ? *sandbox : -1, io);
        return std::move(r).error();
      }
      int ignored = 0;
      while (::waitpid(pid, &ignored, 0) < 0 && errno == EINTR) {
      }
      return std::move(r).error();
    }
  }
  after_spawn_timed.end();
  if (io.before_release) {
    VIGIL_TRY_VOID(check_then_release(pid, pipes.status, io));
  }
  if (io.before_wait) {
    if (auto r = io.before_wait(); !r) {
      ::kill(pid, SIGKILL);  // --die-with-parent takes the sandbox with it
      int ignored = 0;
      while (::waitpid(pid, &ignored, 0) < 0 && errno == EINTR) {
      }
      return std::move(r).error();
    }
  }
  DebugPhase command_timed("command");
  auto waited = wait_forwarding(pid, pipes, io);
  command_timed.end();
  VIGIL_TRY(waited);
  const std::string limit = waited->limit;
  if (!limit.empty()) return LaunchResult{exit_code_for_signal(SIGKILL), limit};
  if (waited->have_exit_code) return LaunchResult{waited->exit_code, limit};
  if (WIFSIGNALED(waited->status)) {
    return LaunchResult{exit_code_for_signal(WTERMSIG(waited->status)), limit};
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
  Pipes none;
  LaunchIo io;
  io.on_event_line = [](std::string_view) {};
  auto waited = wait_forwarding(pid, none, io);
  VIGIL_TRY(waited);
  return LaunchResult{status_to_exit(waited->status), ""};
}

}  // namespace vigil
