#include "supervisor/launch/signal_relay.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "supervisor/launch/forwarded_signals.h"

namespace vigil {

sigset_t handled_set() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : kForwardedSignals) sigaddset(&set, s);
  sigaddset(&set, SIGCHLD);
  return set;
}

SignalBlock::SignalBlock() {
  const sigset_t set = handled_set();
  sigprocmask(SIG_BLOCK, &set, &old_);
}

SignalBlock::~SignalBlock() { sigprocmask(SIG_SETMASK, &old_, nullptr); }

SignalRelay::~SignalRelay() {
  if (!thread_.joinable()) return;
  const std::uint64_t one = 1;
  (void)!::write(stop_.get(), &one, sizeof one);
  thread_.join();
}

Result<void> SignalRelay::start() {
  const sigset_t set = handled_set();
  sfd_.reset(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!sfd_) return system_error("signalfd");
  stop_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!stop_) return system_error("eventfd");
  thread_ = std::thread([this] { run(); });
  return {};
}

void SignalRelay::set_target(pid_t pid) {
  target_.store(pid);
  deliver_pending(pid);
}

void SignalRelay::run() {
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

void SignalRelay::deliver_pending(pid_t pid) {
  const std::uint32_t pending = pending_.exchange(0);
  for (int sig = 1; sig < 32; ++sig)
    if ((pending & (1U << sig)) != 0) forward(pid, sig);
}

void SignalRelay::forward(pid_t pid, int sig) {
  ::kill(pid, sig);
  if (interrupted_fd_ >= 0) {
    const std::uint64_t one = 1;
    (void)!::write(interrupted_fd_, &one, sizeof one);
  }
}

}  // namespace vigil
