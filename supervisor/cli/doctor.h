// `vigil doctor` (alias `probe`): what this machine gives vigil, and for each thing that
// stops it, the exact fix. The facts are gathered by probe_command.cc (reads of /proc
// and /etc, a fork that tries unshare, the seccomp probe); turning them into findings
// and text is pure, so every message is golden-tested from a table of facts. vigil never
// falls back to running unconfined on its own: a machine that cannot sandbox exits 1
// here and 125 from `vigil run`.
#pragma once

#include <string>
#include <vector>

#include "supervisor/launch/odd_mounts.h"

namespace vigil {

struct HostFacts {
  std::string bwrap;          // path, "" when not found
  std::string bwrap_version;  // "bubblewrap 0.8.0"
  bool root = false;          // euid 0
  bool userns_works = false;  // unshare(CLONE_NEWUSER) succeeded in a child of vigil
  // bwrap itself made one (AppArmor can allow bwrap and not vigil): "" = it did, else
  // the first line bwrap printed. Not tried without bwrap.
  std::string bwrap_userns_error = "not tried";
  // -1: the file does not exist (the kernel has no such switch).
  int max_user_namespaces = -1;         // /proc/sys/user/max_user_namespaces
  int unprivileged_userns_clone = -1;   // /proc/sys/kernel/unprivileged_userns_clone (Debian)
  int apparmor_restrict_userns = -1;    // /proc/sys/kernel/apparmor_restrict_unprivileged_userns
  bool bwrap_apparmor_profile = false;  // /etc/apparmor.d/bwrap-userns-restrict (or bwrap)
  std::string container;                // "docker", "podman", "container" or ""
  std::string wsl;                      // "wsl1", "wsl2" or ""
  bool cap_sys_admin_bounding = true;   // CAP_SYS_ADMIN in /proc/self/status CapBnd
  bool seccomp_user_notif = false;
  bool seccomp_notif_recv = false;  // a notification was received and answered
  bool seccomp_sync_wake_up = false;
  bool seccomp_wait_killable_recv = false;
  // SECCOMP_ADDFD_FLAG_SEND (5.14): vigil-init performs write-intent calls itself (the
  // gatekeeper); without it writes are witnessed, best-effort.
  bool seccomp_addfd_send = false;
  std::string seccomp_error;
  // Host mounts bwrap may fail to make read-only (odd_mounts.h), listed before a run and
  // judged by a trial sandbox (bwrap as `vigil run` makes one, this user's privileges).
  std::vector<OddMount> odd_mounts;
  // The trial sandbox's failure, bwrap's first line ("" = it ran, or was not tried).
  std::string trial_error;
  // The default vigil.limits on this host (core/policy/cap_plan.h): the mechanism per cap
  // ("cgroup v2", "cgroup v1", "rlimit", "none"), or why none can be enforced.
  struct Caps {
    bool enforced = false;
    std::string processes = "none", memory = "none", file_size = "none";
    std::string detail;
  } caps;
};

struct Finding {
  enum class Level { kOk, kMiss, kWarn, kInfo, kNote };
  std::string id;  // stable, for --json: "bwrap", "userns", ...
  Level level = Level::kOk;
  std::string what;
  std::string detail;
  std::string fix;  // "" when nothing is to be done
};

// Every finding for these facts, in a fixed order.
std::vector<Finding> diagnose(const HostFacts& facts);
// Whether vigil can sandbox commands on this machine (no kMiss finding).
bool can_sandbox(const std::vector<Finding>& findings);
// The text `vigil doctor` prints, and the --json form (one object, a trailing newline).
std::string render_doctor(const std::vector<Finding>& findings);
// With facts, the JSON also carries "limits" (the mechanism per cap) and "odd_mounts".
std::string render_doctor_json(const std::vector<Finding>& findings,
                               const HostFacts* facts = nullptr);

}  // namespace vigil
