#include "supervisor/launch/launch_wait.h"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "supervisor/launch/sandbox_kill.h"
#include "supervisor/launch/signal_relay.h"

namespace vigil {
namespace {

// Longer than any line the observer may send (events::Limits::untrusted().max_line), so
// a cut line is always refused by the parser.
constexpr size_t kMaxEventLine = 64 * 1024;

// Forwards what the command's stdout/stderr pipe delivered; closes the pipe when the
// destination is gone, so that the command gets EPIPE as it would have without us.
void pass_output(PipeReader& r, OutputStream which, const LaunchIo& io) {
  if (r.buf.empty()) return;
  const bool keep = io.on_output(which, r.buf);
  r.buf.clear();
  if (!keep) r.fd.reset();
}

}  // namespace

Result<WaitOutcome> wait_forwarding(pid_t child, LaunchPipes& p, const LaunchIo& io) {
  const bool confined = p.status.open();
  SignalRelay relay(io.interrupted_fd);
  VIGIL_TRY_VOID(relay.start());
  if (!confined) relay.set_target(child);  // unconfined: the child is the command
  // The child's exit is watched through a pidfd, not only SIGCHLD: in an embedder with
  // other threads, a SIGCHLD may be taken (and, at its default disposition, discarded) by
  // a thread that does not block it, and the signalfd would never see it. Kernels before
  // 5.3 have no pidfd: then the loop also looks every 100 ms.
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, child, 0)));
  const int poll_timeout_ms = io.check_limits && io.check_every_ms >= 0
                                  ? (pidfd ? io.check_every_ms : std::min(io.check_every_ms, 100))
                                  : (pidfd ? -1 : 100);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(io.timeout_ms);
  WaitOutcome out;
  pid_t& init_pid = out.bwrap.init_pid;
  const auto check_every = std::chrono::milliseconds(std::max(io.check_every_ms, 0));
  auto next_check = std::chrono::steady_clock::now();
  auto pass_all = [&] {
    parse_status_lines(&p.status.buf, false, &out.bwrap);
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
      kill_sandbox_tree(child, init_pid);
    };
    if (io.timeout_ms >= 0 && out.limit.empty()) {
      const auto left =
          std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now())
              .count();
      if (left <= 0) {
        end_sandbox("timeout");
        wait_ms = poll_timeout_ms;
      } else {
        wait_ms = wait_ms < 0 ? static_cast<int>(left) : std::min(wait_ms, static_cast<int>(left));
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
    parse_status_lines(&p.status.buf, true, &out.bwrap);
    out.status = wstatus;
    return out;
  }
}

Result<pid_t> await_sandbox_pid(PipeReader& status) {
  while (status.open()) {
    std::string copy = status.buf;
    BwrapStatus seen;
    parse_status_lines(&copy, false, &seen);
    if (seen.init_pid > 0) return seen.init_pid;
    pollfd fd = {status.fd.get(), POLLIN, 0};
    if (::poll(&fd, 1, -1) < 0 && errno != EINTR) return system_error("poll");
    status.read_some();
  }
  return -1;
}

}  // namespace vigil
