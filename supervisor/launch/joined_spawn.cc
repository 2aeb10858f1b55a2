#include "supervisor/launch/joined_spawn.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pthread.h>

#include <cerrno>
#include <cstdint>
#include <memory>
#include <string>

namespace vigil {
namespace {

struct Child {
  const JoinedSpawn* spawn;
  int err = 0;       // the errno of the step that failed (the parent reads it after)
  const char* step = nullptr;
};

int fail(Child* c, const char* step) {
  c->err = errno;
  c->step = step;
  ::_exit(127);
}

// Runs in the child, on its own stack, sharing the parent's memory until execve: no
// allocation, no lock, only system calls. Every signal is blocked on entry.
int child_main(void* arg) {
  auto* c = static_cast<Child*>(arg);
  const JoinedSpawn& s = *c->spawn;
  // A handler of the parent's must never run here (this is its memory): caught signals
  // go back to their default, as posix_spawn does; SIGPIPE too (vigil ignores it, and
  // an ignored disposition would survive the exec).
  for (int sig = 1; sig < NSIG; ++sig) {
    struct sigaction old {};
    if (sig == SIGKILL || sig == SIGSTOP || ::sigaction(sig, nullptr, &old) != 0) continue;
    const bool caught = (old.sa_flags & SA_SIGINFO) != 0 ||
                        (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN);
    if (caught || sig == SIGPIPE) {
      struct sigaction dfl {};
      dfl.sa_handler = SIG_DFL;
      ::sigaction(sig, &dfl, nullptr);
    }
  }
  if (::setpgid(0, 0) != 0) return fail(c, "setpgid");
  if (s.join.user_fd >= 0 && ::setns(s.join.user_fd, CLONE_NEWUSER) != 0)
    return fail(c, "join the session's user namespace");
  if (s.join.net_fd >= 0 && ::setns(s.join.net_fd, CLONE_NEWNET) != 0)
    return fail(c, "join the session's network namespace");
  for (const auto& [from, to] : s.dups) {
    if (from == to) {
      if (::fcntl(from, F_SETFD, 0) != 0) return fail(c, "pass a descriptor");
    } else if (::dup2(from, to) != to) {
      return fail(c, "pass a descriptor");
    }
  }
  ::sigprocmask(SIG_SETMASK, &s.mask, nullptr);
  ::execve(s.path, s.argv, s.envp);
  return fail(c, "execve");
}

}  // namespace

Result<pid_t> spawn_joined(const JoinedSpawn& spawn) {
  constexpr std::size_t kStack = 64 * 1024;
  auto stack = std::make_unique<char[]>(kStack);
  Child child{&spawn};
  // All blocked across the clone: no handler runs in the child before it resets them.
  sigset_t all, old;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  // The stack grows down: its top, 16-byte aligned.
  auto top = reinterpret_cast<std::uintptr_t>(stack.get() + kStack) & ~std::uintptr_t{15};
  const pid_t pid = ::clone(child_main, reinterpret_cast<void*>(top),
                            CLONE_VM | CLONE_VFORK | SIGCHLD, &child);
  const int clone_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (pid < 0) return system_error("clone for bwrap", clone_errno);
  // CLONE_VFORK: the child has exec'd or exited by now.
  if (child.step != nullptr) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return system_error(std::string("cannot start bwrap in the session's network namespace: ") +
                            child.step,
                        child.err);
  }
  return pid;
}

}  // namespace vigil
