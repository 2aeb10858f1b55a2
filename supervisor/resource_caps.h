// The I/O shell around supervisor/core/cap_plan.h: finds what this host offers for
// resource caps, and applies a plan to one command (a cgroup of its own, or rlimits that
// vigil-init sets), watching for a cap being hit so that vigil ends the command and says
// which.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "supervisor/core/cap_plan.h"
#include "supervisor/core/result.h"

namespace vigil {

// No side effects: reads /proc and /sys/fs/cgroup only.
HostLimits probe_host_limits();

// One command's caps. Made before bwrap starts; its destructor kills whatever is still in
// the command's cgroups and removes them.
class CommandCaps {
 public:
  static Result<std::unique_ptr<CommandCaps>> create(const CapPlan& plan);
  ~CommandCaps();
  CommandCaps(const CommandCaps&) = delete;
  CommandCaps& operator=(const CommandCaps&) = delete;

  // Around the spawn of bwrap (LaunchIo::enter_caps / leave_caps): this process moves
  // into the command's cgroups, so that bwrap and everything it starts are born in them,
  // and back out. Serialized across threads (a serve session runs commands in parallel).
  // The move in starts at create(), on a thread of its own: a process's first cgroup
  // migration waits for an RCU grace period (cgroup_threadgroup_rwsem), 4-30 ms on a busy
  // host, which overlaps the rest of the launch's set-up that way; enter() waits for it.
  Result<void> enter();
  void leave();
  // vigil-init's arguments for the rlimits.
  std::vector<std::string> init_args() const;
  // "" while no cap was hit; else the cap's name ("pids", "memory"). `init_pid`: the
  // sandbox's PID 1 on the host (<= 0 before it is known).
  std::string check(pid_t init_pid);
  // How often check() should run while the command runs (ms; -1: never).
  int check_every_ms() const;

 private:
  explicit CommandCaps(CapPlan plan) : plan_(std::move(plan)) {}
  CapPlan plan_;
  std::vector<std::string> dirs_;      // the command's cgroups, one per parent
  std::vector<std::string> homes_;     // where this process was, per parent (enter())
  std::vector<std::uint64_t> base_;    // each watch's counter at the start
  bool entered_ = false;
  std::thread mover_;                   // the move in, started by create()
  std::optional<Result<void>> moved_;   // its outcome, read after the join
  void move_in();
};

}  // namespace vigil
