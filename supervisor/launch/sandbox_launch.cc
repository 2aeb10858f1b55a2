// launch_bwrap(): bwrap spawned with its argv in a sealed memfd, the launch check run
// while it builds the sandbox, the sandbox released, the command waited for
// (launch_wait.h); launch_unconfined() for --sandbox off.
#include "supervisor/launch/sandbox_launch.h"

#include <fcntl.h>
#include <linux/kcmp.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "supervisor/core/base/diagnostics.h"
#include "supervisor/core/base/exit_codes.h"
#include "supervisor/core/base/write_all.h"
#include "supervisor/launch/launch_trace.h"
#include "supervisor/launch/launch_wait.h"
#include "supervisor/launch/sandbox_kill.h"
#include "supervisor/launch/signal_relay.h"

namespace vigil {
namespace {

// Ends a sandbox that must not be released: killed first, its --block-fd closed only
// after (EOF on it would let bwrap go on), then bwrap reaped.
void kill_unreleased(pid_t bwrap, pid_t sandbox, LaunchIo& io) {
  kill_sandbox_tree(bwrap, sandbox);
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
  if (verdict)
    verdict = write_all(io.release->get(), std::string_view("1"), "the sandbox's release");
  if (!verdict) {
    kill_unreleased(bwrap, *sandbox, io);
    return verdict;
  }
  io.release->reset();
  return {};
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

namespace {

// posix_spawn's file actions and attributes, destroyed on every way out.
struct SpawnSetup {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

// The fds bwrap is started with: its argv memfd, the status pipe, the events pipe and the
// caller's others at their own numbers, the command's stdio at 0-2.
struct SpawnFds {
  int memfd = -1;
  int status = -1;
  int out = -1;  // the output pipes' write ends when output is captured
  int err = -1;
};

// bwrap started in its own process group with vigil's signals blocked (SignalBlock) and
// only the listed fds open; inside the command's cgroups when the caller has them.
Result<pid_t> spawn_bwrap(const std::string& bwrap_path, const std::vector<BwrapArg>& args,
                          const SpawnFds& fds, const SignalBlock& block, LaunchIo& io) {
  const std::string fd_arg = std::to_string(fds.memfd);
  std::vector<const char*> argv = {bwrap_path.c_str(), "--args", fd_arg.c_str()};
  const std::vector<std::string> command = command_tokens(args);
  for (const auto& t : command) argv.push_back(t.c_str());
  argv.push_back(nullptr);
  // posix_spawn (a vfork underneath) rather than fork: vigil's address space is not
  // copied for a child that only execs, which is measurable on every command.
  SpawnSetup setup;
  posix_spawn_file_actions_t& actions = setup.actions;
  // dup2 onto itself clears FD_CLOEXEC: exactly these fds reach bwrap.
  posix_spawn_file_actions_adddup2(&actions, fds.memfd, fds.memfd);
  posix_spawn_file_actions_adddup2(&actions, fds.status, fds.status);
  if (io.events != nullptr)
    posix_spawn_file_actions_adddup2(&actions, io.events->write.get(), io.events->write.get());
  for (const int fd : io.pass_fds) posix_spawn_file_actions_adddup2(&actions, fd, fd);
  if (io.stdio[0] != STDIN_FILENO) posix_spawn_file_actions_adddup2(&actions, io.stdio[0], 0);
  if (io.capture_output) {
    posix_spawn_file_actions_adddup2(&actions, fds.out, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, io.merge_output ? fds.out : fds.err,
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
  posix_spawnattr_setpgroup(&setup.attr, 0);
  posix_spawnattr_setsigmask(&setup.attr, &block.old());
  // SIGPIPE back to its default: the CLI ignores it (a closed stdout must not kill the
  // supervisor mid-log), and an ignored disposition would survive the exec.
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&setup.attr, &defaults);
  posix_spawnattr_setflags(&setup.attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  if (io.enter_caps) VIGIL_TRY_VOID(io.enter_caps());
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, bwrap_path.c_str(), &actions, &setup.attr,
                               const_cast<char* const*>(argv.data()),
                               io.env != nullptr ? env.data() : environ);
  if (io.leave_caps) io.leave_caps();
  if (rc != 0) return system_error("cannot execute " + bwrap_path, rc);
  return pid;
}

// The caller's work while bwrap builds (io.after_spawn); when it fails, the sandbox ends
// before anything of it runs and bwrap is reaped.
Result<void> while_bwrap_builds(pid_t bwrap, LaunchPipes& pipes, LaunchIo& io) {
  if (!io.after_spawn) return {};
  auto r = io.after_spawn();
  if (r) return {};
  // vigil-init is still waiting for its go, and the caller closed the program pipe
  // unwritten: vigil-init refuses to start the command and exits, and bwrap with it.
  // We wait for that rather than kill bwrap: killed before it has released its sandbox
  // child (an eventfd write), bwrap leaves that child blocked forever on the eventfd, and
  // no die-with-parent reaches it yet. What the sandbox prints on the way out stays in the
  // pipes (a line or two: they hold it) and is not shown; the error returned is the cause.
  // Held on --block-fd, it would wait for ever: it is killed, never released unchecked.
  if (io.before_release) {
    auto sandbox = await_sandbox_pid(pipes.status);
    kill_unreleased(bwrap, sandbox ? *sandbox : -1, io);
    return std::move(r).error();
  }
  int ignored = 0;
  while (::waitpid(bwrap, &ignored, 0) < 0 && errno == EINTR) {
  }
  return std::move(r).error();
}

// What the sandbox's end says: a cap's kill, the command's exit code (bwrap's JSON status),
// a signal, or bwrap failing before the command started.
Result<LaunchResult> launch_result_of(const WaitOutcome& waited) {
  const std::string limit = waited.limit;
  if (!limit.empty()) return LaunchResult{exit_code_for_signal(SIGKILL), limit};
  if (waited.bwrap.have_exit_code) return LaunchResult{waited.bwrap.exit_code, limit};
  if (WIFSIGNALED(waited.status)) {
    return LaunchResult{exit_code_for_signal(WTERMSIG(waited.status)), limit};
  }
  return make_error(Errc::kUnsupported,
                    "the sandbox could not be set up: bwrap exited with status " +
                        std::to_string(exit_code_for_wait_status(waited.status)) +
                        " before starting the command (its own message is above). Run `vigil "
                        "probe` to check bubblewrap and user namespaces");
}

}  // namespace

Result<LaunchResult> launch_bwrap(const std::string& bwrap_path, const std::vector<BwrapArg>& args,
                                  Pipe status, LaunchIo& io) {
  if (std::string why = bwrap_arg_count_problem(args); !why.empty())
    return make_error(Errc::kRefused, why);
  trace_bwrap_args(bwrap_path, args);
  DebugPhase spawn_timed("spawn");
  auto memfd = sealed_memfd(serialize_options_for_args_fd(args), "the bwrap argv");
  VIGIL_TRY(memfd);
  LaunchPipes pipes;
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
  SignalBlock block;
  auto pid = spawn_bwrap(bwrap_path, args,
                         SpawnFds{memfd->get(), status.write.get(), out_write.get(), err_write.get()},
                         block, io);
  VIGIL_TRY(pid);
  spawn_timed.end();
  if (io.on_spawned) io.on_spawned(*pid);
  // Only the sandbox holds the write ends now: EOF on a pipe means everything inside
  // that could write to it is gone.
  status.write.reset();
  if (io.events != nullptr) io.events->write.reset();
  out_write.reset();
  err_write.reset();
  pipes.status.fd = std::move(status.read);
  if (io.events != nullptr) pipes.events.fd = std::move(io.events->read);
  DebugPhase after_spawn_timed("log, proxy and program while bwrap builds");
  VIGIL_TRY_VOID(while_bwrap_builds(*pid, pipes, io));
  after_spawn_timed.end();
  if (io.before_release) {
    VIGIL_TRY_VOID(check_then_release(*pid, pipes.status, io));
  }
  if (io.before_wait) {
    if (auto r = io.before_wait(); !r) {
      kill_sandbox_tree(*pid);
      int ignored = 0;
      while (::waitpid(*pid, &ignored, 0) < 0 && errno == EINTR) {
      }
      return std::move(r).error();
    }
  }
  DebugPhase command_timed("command");
  auto waited = wait_forwarding(*pid, pipes, io);
  command_timed.end();
  VIGIL_TRY(waited);
  return launch_result_of(*waited);
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
  LaunchPipes none;
  LaunchIo io;
  io.on_event_line = [](std::string_view) {};
  auto waited = wait_forwarding(pid, none, io);
  VIGIL_TRY(waited);
  return LaunchResult{exit_code_for_wait_status(waited->status), ""};
}

}  // namespace vigil
