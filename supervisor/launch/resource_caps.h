// The I/O shell around supervisor/core/policy/cap_plan.h: finds what this host offers for
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

#include "supervisor/core/policy/cap_plan.h"
#include "supervisor/core/base/result.h"

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

  // How the command's processes get into its cgroups, without a wait on the host's RCU
  // grace period on the launch's path. Moving a whole process (a write to cgroup.procs)
  // takes the kernel's cgroup_threadgroup_rwsem for writing, which waits for a grace
  // period: 4-30 ms on a busy host, the caps' whole cost when vigil moved itself in.
  // - cgroup v1: enter() moves only the calling thread (a "0" written to each hierarchy's
  //   `tasks` file moves the writer alone, under cgroup_mutex but not that rwsem), so
  //   bwrap, which that thread spawns, is born in the command's cgroups (a child takes
  //   the css_set of the thread that forks it); leave() moves the thread back. Other
  //   threads never move, so commands of a serve session launch in parallel.
  // - cgroup v2 (no single-thread moves outside threaded cgroups): begin_adopt() moves
  //   bwrap's sandbox child (LaunchIo::before_release: the sandbox's only process while
  //   bwrap holds it on --block-fd, so everything the command starts is born there) on a
  //   thread of its own, overlapping bwrap's mounts and the launch check; end_adopt()
  //   waits for it and must succeed before the sandbox is released.
  Result<void> enter();
  void leave();
  void begin_adopt(pid_t sandbox);
  Result<void> end_adopt();
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
  std::vector<bool> v2_;               // per parent: a cgroup v2 hierarchy
  bool entered_ = false;               // the launching thread is in the v1 cgroups
  std::vector<std::uint64_t> base_;    // each watch's counter at the start
  std::thread mover_;                  // the v2 move in, started by begin_adopt()
  std::optional<Result<void>> moved_;  // its outcome, read after the join
};

}  // namespace vigil
