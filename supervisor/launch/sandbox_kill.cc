#include "supervisor/launch/sandbox_kill.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include "supervisor/core/base/unique_fd.h"

namespace vigil {
namespace {

// "/proc/PID/task/PID/children" into `out` (no allocation).
void children_path(pid_t pid, char (&out)[64]) {
  char digits[16];
  int n = 0;
  for (unsigned long v = static_cast<unsigned long>(pid); n == 0 || v != 0; v /= 10)
    digits[n++] = static_cast<char>('0' + v % 10);
  std::size_t at = 0;
  auto put = [&](const char* s) {
    while (*s != '\0' && at + 1 < sizeof out) out[at++] = *s++;
  };
  auto put_pid = [&] {
    for (int i = n - 1; i >= 0 && at + 1 < sizeof out; --i) out[at++] = digits[i];
  };
  put("/proc/");
  put_pid();
  put("/task/");
  put_pid();
  put("/children");
  out[at] = '\0';
}

// SIGKILL to each pid listed in /proc/PID/task/PID/children ("123 456 ").
void kill_children(pid_t pid) {
  char path[64];
  children_path(pid, path);
  UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC));
  if (!fd) return;
  char buf[4096];
  const ssize_t got = ::read(fd.get(), buf, sizeof buf);
  long child = 0;
  for (ssize_t i = 0; i < got; ++i) {
    if (buf[i] >= '0' && buf[i] <= '9') {
      child = child * 10 + (buf[i] - '0');
    } else {
      if (child > 0) ::kill(static_cast<pid_t>(child), SIGKILL);
      child = 0;
    }
  }
  if (child > 0) ::kill(static_cast<pid_t>(child), SIGKILL);
}

}  // namespace

void kill_sandbox_tree(pid_t bwrap, pid_t sandbox) {
  if (sandbox > 0) ::kill(sandbox, SIGKILL);
  if (bwrap <= 0) return;
  ::kill(bwrap, SIGSTOP);   // clones no more: the list below is every child it will have
  kill_children(bwrap);     // its first process, wherever in its start that is
  ::kill(-bwrap, SIGKILL);  // its group: that process before its setsid()
  ::kill(bwrap, SIGKILL);
}

}  // namespace vigil
