// `vigil doctor` (and its alias `probe`): the facts (I/O) and their findings (pure).
#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "filters/seccomp_probe.h"
#include "supervisor/commands.h"
#include "supervisor/core/unique_fd.h"
#include "supervisor/doctor.h"
#include "supervisor/session_runner.h"

namespace vigil {
namespace {

// Runs argv (absolute path) with stdout+stderr on a pipe; returns (exit status, output).
std::pair<int, std::string> run_capture(const std::vector<std::string>& argv) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return {-1, "pipe failed"};
  UniqueFd rd(fds[0]), wr(fds[1]);
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(wr.get(), 1);
    ::dup2(wr.get(), 2);
    ::execv(cargv[0], cargv.data());
    ::_exit(127);
  }
  wr.reset();
  std::string out;
  char buf[256];
  ssize_t n;
  while ((n = ::read(rd.get(), buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  int st = 0;
  if (pid <= 0 || ::waitpid(pid, &st, 0) != pid) return {-1, out};
  return {WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), out};
}

std::string first_line(std::string s) {
  s = s.substr(0, s.find('\n'));
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// Can this user make a user namespace? Tried in a child.
bool userns_works() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(::unshare(CLONE_NEWUSER) == 0 ? 0 : 1);
  int st = 0;
  return pid > 0 && ::waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

int read_int(const char* path) {
  std::ifstream in(path);
  int v = -1;
  if (!(in >> v)) return -1;
  return v;
}

std::string read_text(const char* path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool exists(const char* path) { return ::access(path, F_OK) == 0; }

HostFacts gather() {
  HostFacts f;
  f.bwrap = find_bwrap(std::nullopt);
  f.root = ::geteuid() == 0;
  f.userns_works = userns_works();
  if (!f.bwrap.empty()) {
    f.bwrap_version = first_line(run_capture({f.bwrap, "--version"}).second);
    // What bwrap itself can do: AppArmor may let bwrap make a namespace and not vigil.
    auto [status, out] =
        run_capture({f.bwrap, "--unshare-user", "--ro-bind", "/", "/", "--", "/bin/true"});
    f.bwrap_userns_error = status == 0 ? "" : first_line(out);
    if (status != 0 && f.bwrap_userns_error.empty())
      f.bwrap_userns_error = "exit " + std::to_string(status);
  }
  f.max_user_namespaces = read_int("/proc/sys/user/max_user_namespaces");
  f.unprivileged_userns_clone = read_int("/proc/sys/kernel/unprivileged_userns_clone");
  f.apparmor_restrict_userns = read_int("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
  f.bwrap_apparmor_profile =
      exists("/etc/apparmor.d/bwrap-userns-restrict") || exists("/etc/apparmor.d/bwrap");
  if (exists("/.dockerenv")) {
    f.container = "docker";
  } else if (exists("/run/.containerenv")) {
    f.container = "podman";
  } else if (read_text("/proc/1/environ").find("container=") != std::string::npos) {
    f.container = "container";
  }
  const std::string osrelease = read_text("/proc/sys/kernel/osrelease");
  if (osrelease.find("WSL2") != std::string::npos ||
      osrelease.find("microsoft-standard") != std::string::npos) {
    f.wsl = "wsl2";
  } else if (osrelease.find("Microsoft") != std::string::npos) {
    f.wsl = "wsl1";
  }
  std::istringstream status(read_text("/proc/self/status"));
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("CapBnd:", 0) != 0) continue;
    const unsigned long long caps = std::stoull(line.substr(7), nullptr, 16);
    f.cap_sys_admin_bounding = ((caps >> 21) & 1ULL) != 0;  // CAP_SYS_ADMIN is 21
  }
  const SeccompFeatures sc = probe_seccomp();
  f.seccomp_user_notif = sc.user_notif;
  f.seccomp_notif_recv = sc.notif_continue;  // the probe's round trip received one
  f.seccomp_sync_wake_up = sc.sync_wake_up;
  f.seccomp_error = sc.error;
  return f;
}

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
  out.push_back({"sync_wake_up", f.seccomp_sync_wake_up ? L::kOk : L::kInfo,
                 "USER_NOTIF_FD_SYNC_WAKE_UP (fast round trips)",
                 f.seccomp_sync_wake_up ? "available" : "optional: a kernel >= 6.6 has it", ""});
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
    std::snprintf(buf, sizeof buf, "%-4s %-46s ", level_name(x.level), x.what.c_str());
    out += buf + x.detail + "\n";
    if (!x.fix.empty()) out += "     fix: " + x.fix + "\n";
  }
  out += can_sandbox(findings)
             ? "vigil can sandbox commands here.\n"
             : "vigil CANNOT sandbox commands here: fix the MISS lines above (vigil never runs "
               "a command unconfined on its own).\n";
  return out;
}

std::string render_doctor_json(const std::vector<Finding>& findings) {
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
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

int cmd_probe(bool json) {
  const auto findings = diagnose(gather());
  const std::string text = json ? render_doctor_json(findings) : render_doctor(findings);
  std::fputs(text.c_str(), stdout);
  return can_sandbox(findings) ? 0 : 1;
}

}  // namespace vigil
