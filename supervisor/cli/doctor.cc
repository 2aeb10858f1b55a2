// `vigil doctor`: findings from host facts, and their text (pure; the facts are gathered
// by probe_command.cc). See doctor.h.
#include "supervisor/cli/doctor.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "supervisor/core/base/display_text.h"

namespace vigil {
namespace {

const char* level_name(Finding::Level l) {
  switch (l) {
    case Finding::Level::kOk:
      return "ok";
    case Finding::Level::kMiss:
      return "MISS";
    case Finding::Level::kWarn:
      return "warn";
    case Finding::Level::kInfo:
      return "info";
    case Finding::Level::kNote:
      return "note";
  }
  return "?";
}

// Why user namespaces are refused, and the fix, from the most specific cause down.
Finding userns_finding(const HostFacts& f) {
  using L = Finding::Level;
  const bool bwrap_ok = !f.bwrap.empty() && f.bwrap_userns_error.empty();
  if (bwrap_ok || f.userns_works) {
    return {"userns", L::kOk, "user namespaces",
            bwrap_ok ? "bwrap can make a user namespace" : "unprivileged user namespaces work", ""};
  }
  if (f.root && f.cap_sys_admin_bounding) {
    return {"userns", L::kOk, "user namespaces",
            "not needed: root with CAP_SYS_ADMIN (bwrap mounts directly)", ""};
  }
  Finding x{"userns", L::kMiss, "user namespaces", "unshare(CLONE_NEWUSER) is refused", ""};
  if (!f.bwrap_userns_error.empty() && f.bwrap_userns_error != "not tried")
    x.detail += " (bwrap: " + f.bwrap_userns_error + ")";
  if (f.apparmor_restrict_userns == 1 && !f.bwrap_apparmor_profile) {
    x.detail =
        "AppArmor restricts unprivileged user namespaces "
        "(kernel.apparmor_restrict_unprivileged_userns=1) and no AppArmor profile lets "
        "bwrap make them";
    x.fix =
        "sudo cp /usr/share/apparmor/extra-profiles/bwrap-userns-restrict /etc/apparmor.d/ "
        "&& sudo apparmor_parser -r /etc/apparmor.d/bwrap-userns-restrict (Ubuntu 24.04+); "
        "or, for every program on the machine, sudo sysctl -w "
        "kernel.apparmor_restrict_unprivileged_userns=0";
  } else if (f.apparmor_restrict_userns == 1) {
    x.detail =
        "AppArmor restricts unprivileged user namespaces, and the bwrap profile in "
        "/etc/apparmor.d does not let this bwrap (" +
        f.bwrap + ") make them";
    x.fix =
        "make the profile name this bwrap's path and load it: sudo apparmor_parser -r "
        "/etc/apparmor.d/bwrap-userns-restrict (sudo aa-status lists what is loaded)";
  } else if (f.max_user_namespaces == 0) {
    x.detail = "user.max_user_namespaces is 0";
    x.fix =
        "sudo sysctl -w user.max_user_namespaces=15000 (and the same line in "
        "/etc/sysctl.d/99-userns.conf to keep it)";
  } else if (f.unprivileged_userns_clone == 0) {
    x.detail = "kernel.unprivileged_userns_clone is 0";
    x.fix =
        "sudo sysctl -w kernel.unprivileged_userns_clone=1 (and the same line in "
        "/etc/sysctl.d/99-userns.conf to keep it)";
  } else if (!f.container.empty()) {
    x.detail = "refused inside a " + f.container +
               " container (Docker's default seccomp profile refuses unshare and "
               "clone(CLONE_NEWUSER))";
    x.fix =
        "start the container with --security-opt seccomp=unconfined --security-opt "
        "apparmor=unconfined, or run vigil on the host";
  } else {
    x.fix =
        "enable unprivileged user namespaces in the kernel (CONFIG_USER_NS=y), or run "
        "vigil as root with CAP_SYS_ADMIN";
  }
  if (f.root && !f.cap_sys_admin_bounding) {
    x.fix += "; as root, keeping CAP_SYS_ADMIN also works (docker run --cap-add SYS_ADMIN)";
  }
  return x;
}

}  // namespace

std::vector<Finding> diagnose(const HostFacts& f) {
  using L = Finding::Level;
  std::vector<Finding> out;
  if (f.bwrap.empty()) {
    out.push_back({"bwrap", L::kMiss, "bubblewrap", "bwrap not found on PATH",
                   "sudo apt-get install bubblewrap (Debian, Ubuntu) or sudo dnf install "
                   "bubblewrap (Fedora)"});
  } else {
    out.push_back({"bwrap", L::kOk, "bubblewrap", f.bwrap + " (" + f.bwrap_version + ")", ""});
  }
  if (f.wsl == "wsl1") {
    out.push_back({"wsl", L::kMiss, "WSL", "WSL1 has neither namespaces nor seccomp",
                   "convert the distribution to WSL2: wsl --set-version <distro> 2"});
  } else if (f.wsl == "wsl2") {
    out.push_back(
        {"wsl", L::kInfo, "WSL", "WSL2: a real Linux kernel; the checks below apply", ""});
  }
  if (!f.container.empty()) {
    out.push_back(
        {"container", L::kInfo, "container", "running inside a " + f.container + " container", ""});
  }
  out.push_back(userns_finding(f));
  if (!f.cap_sys_admin_bounding) {
    out.push_back({"cap_sys_admin", L::kInfo, "CAP_SYS_ADMIN",
                   "dropped from the bounding set: bwrap must use a user namespace", ""});
  }
  if (!f.seccomp_user_notif) {
    out.push_back({"seccomp_user_notif", L::kMiss, "seccomp USER_NOTIF (observer)",
                   f.seccomp_error.empty() ? "refused" : f.seccomp_error,
                   "a kernel >= 5.5 with CONFIG_SECCOMP_FILTER=y"});
  } else if (!f.seccomp_notif_recv) {
    out.push_back({"seccomp_notif_recv", L::kMiss, "SECCOMP_IOCTL_NOTIF_RECV",
                   "a notification could not be received and answered (a kernel < 5.5, or an "
                   "LSM refusing the ioctl)",
                   "a kernel >= 5.5; where SELinux or AppArmor denies the ioctl, allow "
                   "ioctl on the seccomp listener for vigil-init"});
  } else {
    out.push_back({"seccomp_user_notif", L::kOk, "seccomp USER_NOTIF (observer)",
                   "filters install and notifications round-trip", ""});
  }
  out.push_back({"gatekeeper", f.seccomp_addfd_send ? L::kOk : L::kWarn,
                 "NOTIF_ADDFD + ADDFD_FLAG_SEND (gatekeeper)",
                 f.seccomp_addfd_send
                     ? "vigil-init performs write-intent calls itself"
                     : "witness: best-effort (writes are observed, not performed, so a racing "
                       "thread can write under a name the log does not show)",
                 f.seccomp_addfd_send ? "" : "a kernel >= 5.14"});
  // vigil.network.capture (observer/inet_broker.h) installs the proxied socket at the
  // caller's number (ADDFD_FLAG_SETFD, 5.9) and rides on the gatekeeper's connect() trap:
  // it needs what the gatekeeper needs.
  out.push_back({"network_capture", f.seccomp_addfd_send ? L::kOk : L::kWarn,
                 "network capture (vigil.network.capture)",
                 f.seccomp_addfd_send
                     ? "programs that ignore the proxy settings are carried through the proxy"
                     : "off on this kernel: programs that ignore the proxy settings find no "
                       "network, as before",
                 f.seccomp_addfd_send ? "" : "a kernel >= 5.14 (ADDFD_FLAG_SETFD is 5.9, the "
                                             "gatekeeper's connect() trap 5.14)"});
  out.push_back({"wait_killable_recv", f.seccomp_wait_killable_recv ? L::kOk : L::kInfo,
                 "FILTER_FLAG_WAIT_KILLABLE_RECV",
                 f.seccomp_wait_killable_recv ? "available" : "optional: a kernel >= 5.19 has it",
                 ""});
  out.push_back({"sync_wake_up", f.seccomp_sync_wake_up ? L::kOk : L::kInfo,
                 "USER_NOTIF_FD_SYNC_WAKE_UP (fast round trips)",
                 f.seccomp_sync_wake_up ? "available" : "optional: a kernel >= 6.6 has it", ""});
  out.push_back({"limits", f.caps.enforced ? L::kOk : L::kMiss,
                 "resource caps (vigil.limits defaults)", f.caps.detail,
                 f.caps.enforced ? ""
                                 : "see the message: a cgroup vigil may manage, or "
                                   "vigil.limits.processes set to 0"});
  if (!f.trial_error.empty()) {
    const bool proc = f.trial_error.find("proc") != std::string::npos;
    out.push_back(
        {"trial_sandbox", L::kMiss, "a trial sandbox (bwrap as vigil run makes one)",
         f.trial_error,
         proc ? "this /proc has masked entries (a container), so a new /proc is refused to a "
                "user namespace: set \"enableWeakerNestedSandbox\": true in the settings "
                "(weaker: the command then sees the container's processes), or give the "
                "container an unmasked /proc (docker run --security-opt systempaths=unconfined)"
              : "bwrap's message above names what it could not do"});
  }
  for (const auto& m : f.odd_mounts) {
    switch (m.trial) {
      case OddMount::Trial::kNotTried:
        out.push_back(
            {"odd_mount", L::kNote, m.mount_point, m.fstype + ": " + m.what, kOddMountFix});
        break;
      case OddMount::Trial::kReadOnly:
        out.push_back({"odd_mount", L::kNote, m.mount_point,
                       m.fstype + ": " + m.what + "; read-only in a trial sandbox", ""});
        break;
      case OddMount::Trial::kWritable:
        out.push_back({"odd_mount", L::kMiss, m.mount_point, m.fstype + ": " + m.what,
                       writable_mount_fix(m.mount_point)});
        break;
    }
  }
  return out;
}

bool can_sandbox(const std::vector<Finding>& findings) {
  for (const auto& x : findings) {
    if (x.level == Finding::Level::kMiss) return false;
  }
  return true;
}

std::string render_doctor(const std::vector<Finding>& findings) {
  std::string out;
  char buf[512];
  for (const auto& x : findings) {
    // `what` is a literal, or a host mount's path: escaped either way.
    std::snprintf(buf, sizeof buf, "%-4s %-46s ", level_name(x.level), escape_text(x.what).c_str());
    out += buf + escape_text(x.detail) + "\n";
    if (!x.fix.empty()) out += "     fix: " + escape_text(x.fix) + "\n";
  }
  out += can_sandbox(findings)
             ? "vigil can sandbox commands here.\n"
             : "vigil CANNOT sandbox commands here: fix the MISS lines above (vigil never runs "
               "a command unconfined on its own).\n";
  return out;
}

std::string render_doctor_json(const std::vector<Finding>& findings, const HostFacts* facts) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& x : findings) {
    list.push_back({{"id", x.id},
                    {"level", level_name(x.level)},
                    {"what", x.what},
                    {"detail", x.detail},
                    {"fix", x.fix}});
  }
  nlohmann::ordered_json j = {{"sandbox_available", can_sandbox(findings)},
                              {"findings", std::move(list)}};
  if (facts != nullptr) {
    j["limits"] = {{"enforced", facts->caps.enforced},
                   {"processes", facts->caps.processes},
                   {"memory", facts->caps.memory},
                   {"file_size", facts->caps.file_size},
                   {"detail", facts->caps.detail}};
    j["odd_mounts"] = nlohmann::ordered_json::array();
    for (const auto& m : facts->odd_mounts) {
      j["odd_mounts"].push_back({{"path", m.mount_point}, {"fstype", m.fstype}, {"what", m.what}});
    }
  }
  return j.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace) + "\n";
}

std::vector<Finding> export_spool_findings(const std::optional<ExportStatus>& status,
                                           std::int64_t now) {
  if (!status) return {};
  Finding f;
  f.id = "export-spool";
  f.what = "export spool";
  if (status->spool_full) {
    f.level = Finding::Level::kWarn;
    f.detail = spool_full_warning(*status, now);
    f.fix = "make the collector " + status->target + " reachable again (the exporter drains "
            "the spool in order), or raise vigil.export.spoolMaxBytes";
  } else {
    f.level = Finding::Level::kOk;
    f.detail = std::to_string(status->spool_bytes) + " of " + std::to_string(status->spool_cap) +
               " bytes waiting for " + status->target;
  }
  return {f};
}

}  // namespace vigil
