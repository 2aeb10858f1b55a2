// The signals a launch forwards to the command (SIGINT, SIGTERM, SIGHUP, SIGQUIT), and the
// thread that forwards them. Used by launch_wait.cc for bwrap and for --sandbox off.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <thread>

#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil {

// The forwarded signals and SIGCHLD.
sigset_t handled_set();

// Blocks handled_set() in the calling thread; restores the old mask on scope exit.
class SignalBlock {
 public:
  SignalBlock();
  ~SignalBlock();
  SignalBlock(const SignalBlock&) = delete;
  SignalBlock& operator=(const SignalBlock&) = delete;
  const sigset_t& old() const { return old_; }

 private:
  sigset_t old_;
};

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
  ~SignalRelay();
  // The calling thread has the signals blocked (SignalBlock); the thread inherits that.
  Result<void> start();
  // Where forwarded signals go: vigil-init (the sandbox's PID 1, which passes them on), or
  // the command itself when unconfined. A signal that comes before the target is known
  // is kept and delivered here (a SIGTERM sent as soon as the command is up was once
  // dropped, leaving vigil and the command running).
  void set_target(pid_t pid);

 private:
  void run();
  void deliver_pending(pid_t pid);
  void forward(pid_t pid, int sig);
  std::atomic<std::uint32_t> pending_{0};
  int interrupted_fd_;
  UniqueFd sfd_, stop_;
  std::atomic<pid_t> target_{-1};
  std::thread thread_;
};

}  // namespace vigil
