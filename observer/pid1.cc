#include "observer/pid1.h"

#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include "observer/fd_passing.h"
#include "supervisor/core/base/exit_codes.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil::init {
namespace {

// Signals passed on to the worker. The kernel drops a signal sent to a namespace's init
// when init has no handler for it (even if blocked), so each gets a no-op handler and
// is then blocked and read from a signalfd.
constexpr int kForwarded[] = {SIGINT,  SIGTERM, SIGHUP,   SIGQUIT,
                              SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT};

void noop_handler(int) {}

sigset_t supervised_set() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : kForwarded) sigaddset(&set, s);
  sigaddset(&set, SIGCHLD);
  return set;
}

// The mount table as bwrap left it; an unreadable one leaves every verdict "allowed"
// with the mount table as the only judge (it always is).
std::vector<Mount> load_mounts() {
  auto m = load_mount_table();
  return m ? std::move(m).value() : std::vector<Mount>{};
}

// Forwarded signals caught (so that they reach the worker), the supervised ones blocked
// and read from the returned signalfd (empty on failure); the mask before in *old.
UniqueFd supervise_signals(sigset_t* old) {
  struct sigaction sa {};
  sa.sa_handler = noop_handler;
  sigemptyset(&sa.sa_mask);
  for (int s : kForwarded) ::sigaction(s, &sa, nullptr);
  const sigset_t set = supervised_set();
  ::sigprocmask(SIG_BLOCK, &set, old);
  return UniqueFd(::signalfd(-1, &set, SFD_CLOEXEC));
}

// The forked child: the worker starts with default dispositions and the caller's mask.
[[noreturn]] void become_worker(const WorkerMain& worker, const sigset_t& old) {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int s : kForwarded) ::sigaction(s, &dfl, nullptr);
  ::sigaction(SIGPIPE, &dfl, nullptr);  // vigil-init ignores it; the command must not
  // We are non-dumpable, and a fork inherits that; the observer must be able to read
  // the worker's memory (process_vm_readv) from its very first exec on. Its memory is
  // a copy of ours, which holds nothing secret.
  ::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
  ::sigprocmask(SIG_SETMASK, &old, nullptr);
  ::_exit(worker());
}

// Reaps everything that has exited: the worker (its status in *worker_status) and any
// orphan re-parented to PID 1.
void reap(pid_t child, int* worker_status) {
  while (true) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) break;
    if (pid == child) *worker_status = status;
  }
}

// The epoll set of the loop: the signalfd (tag 0) and the bridges (tags with their high
// bit set). Empty on failure (errno set).
// The DNS stub's tags (vigil.network.capture): DnsStub::owns().
UniqueFd epoll_of(int sfd, Bridge* bridge, DnsStub* dns) {
  UniqueFd ep(::epoll_create1(EPOLL_CLOEXEC));
  epoll_event sev{};
  sev.events = EPOLLIN;
  sev.data.u64 = 0;
  if (!ep || ::epoll_ctl(ep.get(), EPOLL_CTL_ADD, sfd, &sev) != 0 ||
      (bridge != nullptr && !bridge->attach(ep.get()).ok()) ||
      (dns != nullptr && !dns->attach(ep.get()).ok()))
    return UniqueFd();
  return ep;
}

// An event of the sandbox's network: the DNS stub's, or the bridges'.
void serve_io(int ep, const epoll_event& e, Bridge* bridge, DnsStub* dns) {
  if (DnsStub::owns(e.data.u64)) {
    if (dns != nullptr) dns->handle(ep, e.data.u64);
  } else if (bridge != nullptr) {
    bridge->handle(ep, e.data.u64, e.events);
  }
}

// The worker handed over its listener: the observer starts on it. False when there is
// none (the worker failed before installing: it reports that) or it cannot start.
bool start_observer(int ep, const ObserverSetup& observer,
                    std::optional<std::vector<Mount>>* mounts, std::optional<Observer>* obs) {
  UniqueFd listener = receive_fd(observer.listener_channel);
  ::epoll_ctl(ep, EPOLL_CTL_DEL, observer.listener_channel, nullptr);
  if (!listener) return false;
  auto o = Observer::create(std::move(listener), observer.events_fd,
                            *mounts ? std::move(**mounts) : load_mounts(), observer.options);
  mounts->reset();
  if (!o) return false;
  obs->emplace(std::move(o).value());
  return true;
}

}  // namespace

int run_as_pid1(const WorkerMain& worker, Bridge* bridge, const ObserverSetup* observer,
                DnsStub* dns) {
  // Non-dumpable: the worker (same uid) can neither ptrace us nor read our environ/mem.
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
    std::perror("vigil-init: PR_SET_DUMPABLE");
    return to_int(ExitCode::kSandboxSetup);
  }
  sigset_t old;
  UniqueFd sfd = supervise_signals(&old);
  if (!sfd) {
    std::perror("vigil-init: signalfd");
    return to_int(ExitCode::kSandboxSetup);
  }
  const pid_t child = ::fork();
  if (child < 0) {
    std::perror("vigil-init: fork");
    return to_int(ExitCode::kSandboxSetup);
  }
  if (child == 0) {
    sfd.reset();
    become_worker(worker, old);
  }
  // Read while the worker installs its filters (on the other CPU, where there is one):
  // the command's exec is the observer's first notification, and it waits for this.
  // bwrap finished every mount before it ran us, so the table is final.
  std::optional<std::vector<Mount>> mounts;
  if (observer != nullptr) mounts = observer->mounts ? *observer->mounts : load_mounts();

  UniqueFd ep = epoll_of(sfd.get(), bridge, dns);
  if (!ep) {
    std::perror("vigil-init: epoll");
    ::kill(child, SIGKILL);
    return to_int(ExitCode::kSandboxSetup);
  }

  // The observer starts when the worker hands over its listener (tag 1), before exec.
  // The listener itself is waited for with poll() beside the epoll fd, not inside it:
  // epoll's wake-up drops SYNC_WAKE_UP's same-CPU hand-off, which is most of its gain.
  constexpr std::uint64_t kChannelTag = 1;
  std::optional<Observer> obs;
  bool listening = false;
  if (observer != nullptr) {
    epoll_event cev{};
    cev.events = EPOLLIN;
    cev.data.u64 = kChannelTag;
    ::epoll_ctl(ep.get(), EPOLL_CTL_ADD, observer->listener_channel, &cev);
  }

  int worker_status = -1;
  while (true) {
    int timeout = -1;
    if (obs) {
      timeout = obs->flush_timeout_ms();
      if (timeout == 0) {
        obs->flush();
        timeout = obs->flush_timeout_ms();
      }
    }
    pollfd waits[2] = {{ep.get(), POLLIN, 0}, {listening ? obs->fd() : -1, POLLIN, 0}};
    if (::poll(waits, 2, timeout) < 0) {
      if (errno == EINTR) continue;
      std::perror("vigil-init: poll");
      ::kill(child, SIGKILL);
      return to_int(ExitCode::kSandboxSetup);
    }
    if (waits[1].revents != 0 && !obs->on_ready(waits[1].revents)) listening = false;
    if ((waits[0].revents & POLLIN) == 0) continue;
    epoll_event events[64];
    const int n = ::epoll_wait(ep.get(), events, 64, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::perror("vigil-init: epoll_wait");
      ::kill(child, SIGKILL);
      return to_int(ExitCode::kSandboxSetup);
    }
    for (int i = 0; i < n; ++i) {
      if (events[i].data.u64 == kChannelTag) {
        if (start_observer(ep.get(), *observer, &mounts, &obs)) listening = true;
        continue;
      }
      if (events[i].data.u64 != 0) {
        serve_io(ep.get(), events[i], bridge, dns);
        continue;
      }
      signalfd_siginfo si{};
      if (::read(sfd.get(), &si, sizeof si) != static_cast<ssize_t>(sizeof si)) continue;
      if (si.ssi_signo != SIGCHLD) {
        ::kill(child, static_cast<int>(si.ssi_signo));
        continue;
      }
      reap(child, &worker_status);
    }
    // The worker is the command: when it is gone, so is the sandbox (the kernel kills
    // every process left in the namespace when PID 1 exits).
    if (worker_status != -1) {
      if (obs) obs->finish();
      return exit_code_for_wait_status(worker_status);
    }
  }
}

}  // namespace vigil::init
