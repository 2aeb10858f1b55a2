#include "supervisor/core/policy/cap_plan.h"

#include <cstdio>

namespace vigil {
namespace {

std::string bytes_text(std::uint64_t n) {
  char buf[32];
  if (n >= (std::uint64_t{1} << 30)) {
    std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(n) / (1 << 30));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(n) / (1 << 20));
  }
  return buf;
}

constexpr const char* kCgroupFix =
    "run vigil in a cgroup it may manage (as a user: `systemd-run --user --scope -p "
    "Delegate=yes vigil run ...`; as root: a writable /sys/fs/cgroup with the pids and memory "
    "controllers)";

}  // namespace

const char* cap_via_name(CapVia via) {
  switch (via) {
    case CapVia::kNone:
      return "none";
    case CapVia::kCgroup2:
      return "cgroup v2";
    case CapVia::kCgroup1:
      return "cgroup v1";
    case CapVia::kRlimit:
      return "rlimit";
  }
  return "none";
}

Result<CapPlan> build_cap_plan(const LimitsOptions& want, const HostLimits& host) {
  CapPlan plan;
  plan.processes = want.processes;
  plan.memory_bytes = want.memory_bytes ? *want.memory_bytes : host.mem_total_bytes / 2;
  plan.max_file_bytes = want.max_file_bytes;
  plan.timeout_s = want.timeout_s;
  const bool v2 = !host.cgroup2_dir.empty();
  auto add_parent = [&plan](const std::string& dir) {
    for (const auto& p : plan.cgroup_parents) {
      if (p == dir) return;
    }
    plan.cgroup_parents.push_back(dir);
  };

  if (plan.processes > 0) {
    // The sandbox's own tasks (bwrap, vigil-init and its threads; vigil's while it moves
    // in to spawn) do not come out of the command's share.
    const std::string n = std::to_string(plan.processes + kInitTasks);
    if (v2) {
      plan.processes_via = CapVia::kCgroup2;
      add_parent(host.cgroup2_dir);
      plan.writes.push_back({host.cgroup2_dir, "pids.max", n});
      plan.watches.push_back({host.cgroup2_dir, "pids.events", "max", "pids"});
    } else if (!host.cgroup1_pids_dir.empty()) {
      plan.processes_via = CapVia::kCgroup1;
      add_parent(host.cgroup1_pids_dir);
      plan.writes.push_back({host.cgroup1_pids_dir, "pids.max", n});
      plan.watches.push_back({host.cgroup1_pids_dir, "pids.events", "max", "pids"});
    } else if (host.root) {
      return make_error(Errc::kUnsupported,
                        "vigil.limits.processes cannot be enforced: root is exempt from "
                        "RLIMIT_NPROC and no cgroup with the pids controller can be used. "
                        "Fix: " + std::string(kCgroupFix) +
                            ", or set vigil.limits.processes to 0 to run without a process cap");
    } else if (!host.nproc_per_userns) {
      return make_error(Errc::kUnsupported,
                        "vigil.limits.processes cannot be enforced: before Linux 5.14 "
                        "RLIMIT_NPROC counts every process of your user on the host, not the "
                        "sandbox's, and no cgroup with the pids controller can be used. Fix: " +
                            std::string(kCgroupFix) +
                            ", or set vigil.limits.processes to 0 to run without a process cap");
    } else {
      plan.processes_via = CapVia::kRlimit;
      plan.rlimits.push_back({"nproc", plan.processes + kInitTasks});
      plan.count_processes = true;
    }
  }

  if (plan.memory_bytes > 0) {
    const std::string n = std::to_string(plan.memory_bytes);
    if (v2 && host.cgroup2_memory) {
      plan.memory_via = CapVia::kCgroup2;
      add_parent(host.cgroup2_dir);
      plan.writes.push_back({host.cgroup2_dir, "memory.max", n});
      // No swap to spill into, and one OOM kill ends the whole sandbox (a build whose one
      // compiler died would only go on half done).
      plan.writes.push_back({host.cgroup2_dir, "memory.swap.max", "0", true});
      plan.writes.push_back({host.cgroup2_dir, "memory.oom.group", "1", true});
      plan.watches.push_back({host.cgroup2_dir, "memory.events", "oom_kill", "memory"});
    } else if (!host.cgroup1_memory_dir.empty()) {
      plan.memory_via = CapVia::kCgroup1;
      add_parent(host.cgroup1_memory_dir);
      plan.writes.push_back({host.cgroup1_memory_dir, "memory.limit_in_bytes", n});
      plan.writes.push_back({host.cgroup1_memory_dir, "memory.memsw.limit_in_bytes", n, true});
      plan.watches.push_back({host.cgroup1_memory_dir, "memory.oom_control", "oom_kill", "memory"});
    } else {
      plan.memory_via = CapVia::kRlimit;
      plan.rlimits.push_back({"data", plan.memory_bytes});
    }
  }

  if (plan.max_file_bytes > 0) {
    plan.file_via = CapVia::kRlimit;
    plan.rlimits.push_back({"fsize", plan.max_file_bytes});
  }
  return plan;
}

std::string describe_cap_plan(const CapPlan& plan) {
  std::string s = "processes ";
  s += plan.processes > 0 ? std::to_string(plan.processes) + " (" +
                                (plan.processes_via == CapVia::kRlimit
                                     ? std::string("RLIMIT_NPROC, this sandbox's user namespace")
                                     : std::string(cap_via_name(plan.processes_via))) +
                                ")"
                          : std::string("no cap");
  s += ", memory ";
  s += plan.memory_bytes > 0 ? bytes_text(plan.memory_bytes) + " (" +
                                   (plan.memory_via == CapVia::kRlimit
                                        ? std::string("RLIMIT_DATA, per process")
                                        : std::string(cap_via_name(plan.memory_via))) +
                                   ")"
                             : std::string("no cap");
  s += ", file size ";
  s += plan.max_file_bytes > 0 ? bytes_text(plan.max_file_bytes) + " (RLIMIT_FSIZE)"
                               : std::string("no cap");
  s += ", timeout ";
  if (plan.timeout_s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%gs", *plan.timeout_s);
    s += buf;
  } else {
    s += "none";
  }
  return s;
}

std::string limit_detail(const std::string& limit, const CapPlan& plan) {
  if (limit == "pids") {
    return "the sandbox reached its cap of " + std::to_string(plan.processes) +
           " processes and threads and was ended (a fork bomb or a runaway build?); "
           "vigil.limits.processes raises it";
  }
  if (limit == "memory") {
    return "the sandbox reached its memory cap of " + bytes_text(plan.memory_bytes) +
           " and was ended; vigil.limits.memoryBytes raises it";
  }
  if (limit == "file size") {
    return "a process was killed (SIGXFSZ) writing a file past the cap of " +
           bytes_text(plan.max_file_bytes) + "; vigil.limits.maxFileBytes raises it";
  }
  if (limit == "timeout") {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", plan.timeout_s ? *plan.timeout_s : 0.0);
    return std::string("it ran longer than the timeout of ") + buf +
           "s and was ended (--timeout or vigil.limits.timeoutSeconds)";
  }
  return "the sandbox was ended at a resource cap";
}

}  // namespace vigil
