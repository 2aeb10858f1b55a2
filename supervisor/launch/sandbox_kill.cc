#include "supervisor/launch/sandbox_kill.h"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>

#include "supervisor/core/base/unique_fd.h"

namespace vigil {
namespace {

// How long a kill waits for what it killed to be gone (a SIGKILLed process ends in
// microseconds on an idle machine; on a loaded one its exit, and the release of its memory,
// can take a scheduler's tick or more).
constexpr std::chrono::milliseconds kGoneWithin{1000};

UniqueFd pidfd_of(pid_t pid) {
  return UniqueFd(pid > 0 ? static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)) : -1);
}

// Waits until every process behind `fds` has exited (a pidfd reads as ready then), or the
// bound runs out.
void wait_gone(std::vector<UniqueFd>& fds) {
  std::vector<pollfd> p;
  for (const auto& fd : fds) {
    if (fd) p.push_back({fd.get(), POLLIN, 0});
  }
  const auto until = std::chrono::steady_clock::now() + kGoneWithin;
  while (!p.empty()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          until - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) return;
    if (::poll(p.data(), p.size(), static_cast<int>(left)) < 0 && errno != EINTR) return;
    std::erase_if(p, [](const pollfd& x) { return x.revents != 0; });
    for (auto& x : p) x.revents = 0;
  }
}

}  // namespace

std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  const std::string p = std::to_string(pid);
  std::ifstream in("/proc/" + p + "/task/" + p + "/children");
  for (pid_t c = 0; in >> c;) out.push_back(c);
  return out;
}

void kill_sandbox_tree(pid_t bwrap, pid_t sandbox) {
  // Each is named by a pidfd before its kill: the wait below is for that very process.
  std::vector<UniqueFd> killed;
  if (sandbox > 0) {
    killed.push_back(pidfd_of(sandbox));
    ::kill(sandbox, SIGKILL);
  }
  if (bwrap > 0) {
    ::kill(bwrap, SIGSTOP);  // clones no more: the list below is every child it will have
    for (const pid_t child : children_of(bwrap)) {  // wherever in its start
      killed.push_back(pidfd_of(child));  // bwrap is stopped: the pid is its child's still
      ::kill(child, SIGKILL);
    }
    ::kill(-bwrap, SIGKILL);  // its group: that process before its setsid()
    ::kill(bwrap, SIGKILL);
  }
  // Gone, not only signalled: whoever called this may say next that nothing is left.
  wait_gone(killed);
}

}  // namespace vigil
