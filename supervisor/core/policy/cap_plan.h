// Resource caps (settings vigil.limits): which mechanism enforces each cap on this host.
// A pure function of the policy and the host's facts (found by supervisor/resource_caps),
// so that the choice is table-tested and `vigil probe` prints the same plan a run uses.
//
// Mechanisms, best first:
//   - cgroup v2, where a cgroup is delegated to us (root's own /sys/fs/cgroup, or a
//     systemd scope with Delegate=yes): pids.max and memory.max on one cgroup per command,
//     counting the whole sandbox; hitting them shows in pids.events / memory.events.
//   - cgroup v1 (a hybrid host where the pids and memory controllers are v1 hierarchies we
//     can write, as root usually can): the same limits in pids/ and memory/.
//   - rlimits, set by vigil-init on the command just before exec:
//       RLIMIT_NPROC counts the tasks of one uid *in one user namespace* (kernel >= 5.14,
//       ucounts): the sandbox has a user namespace of its own, so the cap is the
//       sandbox's, and the user's processes outside neither count against it nor are
//       starved by it. Before 5.14 it was the uid's count across the whole host: not a
//       per-sandbox cap, so not used. uid 0 is exempt from RLIMIT_NPROC altogether: root
//       needs a cgroup.
//       RLIMIT_DATA for memory (private writable mappings and brk: what a program
//       allocates; not RLIMIT_AS, whose address-space reservations break runtimes such as
//       Go, V8 and sanitizers). It is per process: N processes may hold N times the cap,
//       and an allocation past it fails (ENOMEM) rather than ending the command.
//   - RLIMIT_FSIZE, always (no cgroup has it): a write past it fails with EFBIG and
//     raises SIGXFSZ, which ends a process that does not handle it.
//   - the wall-clock timeout, always: the supervisor kills the sandbox's PID 1.
// A cap that nothing here can enforce is an error naming the fix, never a silent run
// without it (0 in the settings is the explicit "no cap").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "supervisor/core/base/result.h"

namespace vigil {

// Settings vigil.limits. 0 = no cap (said explicitly by the user).
struct LimitsOptions {
  std::uint64_t processes = 4096;  // tasks (processes and threads) in the sandbox
  // Bytes; unset: half of the host's memory.
  std::optional<std::uint64_t> memory_bytes;
  std::uint64_t max_file_bytes = std::uint64_t{8} << 30;  // one file's size
  std::optional<double> timeout_s;                        // wall clock; unset: none
  bool operator==(const LimitsOptions&) const = default;
};

// What this host offers (supervisor/launch/resource_caps.cc finds it).
struct HostLimits {
  bool root = false;              // euid 0: exempt from RLIMIT_NPROC
  bool nproc_per_userns = false;  // kernel >= 5.14: RLIMIT_NPROC counts per user namespace
  // A cgroup v2 directory under which vigil may make a child per command with the pids and
  // memory controllers ("" = none), and whether it has the memory controller.
  std::string cgroup2_dir;
  bool cgroup2_memory = false;
  // Writable cgroup v1 directories of the pids and memory hierarchies ("" = none).
  std::string cgroup1_pids_dir;
  std::string cgroup1_memory_dir;
  std::uint64_t mem_total_bytes = 0;  // /proc/meminfo MemTotal
};

enum class CapVia { kNone, kCgroup2, kCgroup1, kRlimit };
const char* cap_via_name(CapVia via);

// One file written in a command's cgroup: parent_dir/<name>/file = value.
struct CgroupWrite {
  std::string parent_dir;
  std::string file;
  std::string value;
  bool optional = false;  // absent on some kernels (memory.swap.max): skipped then
};
// A counter in a command's cgroup whose growth means a cap was hit: the line
// "<key> N" of parent_dir/<name>/file.
struct CgroupWatch {
  std::string parent_dir;
  std::string file;
  std::string key;
  std::string limit;  // "pids", "memory"
};
struct RlimitSetting {
  std::string name;  // vigil-init's --rlimit NAME=VALUE: "nproc", "data", "fsize"
  std::uint64_t value = 0;
};

struct CapPlan {
  std::uint64_t processes = 0;  // 0: none
  std::uint64_t memory_bytes = 0;
  std::uint64_t max_file_bytes = 0;
  std::optional<double> timeout_s;
  CapVia processes_via = CapVia::kNone;
  CapVia memory_via = CapVia::kNone;
  CapVia file_via = CapVia::kNone;
  std::vector<std::string> cgroup_parents;  // each gets a child per command (moved into)
  std::vector<CgroupWrite> writes;
  std::vector<CgroupWatch> watches;
  std::vector<RlimitSetting> rlimits;
  // rlimit mode only: the supervisor counts the sandbox's processes (RLIMIT_NPROC leaves
  // a fork bomb spinning at the cap; the count tells vigil to end it).
  bool count_processes = false;
};

// The sandbox's tasks that are not the command's (vigil-init and its observer threads;
// in a cgroup also bwrap, and vigil's own threads while it moves in to spawn bwrap),
// added to the command's share in pids.max and RLIMIT_NPROC.
inline constexpr std::uint64_t kInitTasks = 8;
// The smallest vigil.limits.processes (other than 0, no cap): below it a shell barely
// runs a pipeline.
inline constexpr std::uint64_t kMinProcesses = 16;

Result<CapPlan> build_cap_plan(const LimitsOptions& want, const HostLimits& host);

// "processes 4096 (cgroup v1), memory 8.0 GiB (RLIMIT_DATA, per process), ...": for
// `vigil probe` and docs.
std::string describe_cap_plan(const CapPlan& plan);

// The cap a command was ended at ("pids", "memory", "timeout", "file size"), in plain
// words with the setting that raises it: the <sandbox_violations> line and vigil's stderr.
std::string limit_detail(const std::string& limit, const CapPlan& plan);

}  // namespace vigil
