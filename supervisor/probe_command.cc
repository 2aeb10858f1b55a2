// `vigil probe`: what this machine gives vigil, and how to fix what is missing.
#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "filters/seccomp_probe.h"
#include "supervisor/commands.h"
#include "supervisor/core/display_text.h"
#include "supervisor/core/unique_fd.h"
#include "supervisor/odd_mounts.h"
#include "supervisor/resource_caps.h"
#include "supervisor/session_runner.h"

namespace vigil {
namespace {

std::string bwrap_version(const std::string& bwrap) {
  if (bwrap.empty()) return {};
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return {};
  UniqueFd rd(fds[0]), wr(fds[1]);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(wr.get(), 1);
    const char* argv[] = {bwrap.c_str(), "--version", nullptr};
    ::execv(bwrap.c_str(), const_cast<char* const*>(argv));
    ::_exit(127);
  }
  wr.reset();
  std::string out;
  char buf[256];
  ssize_t n;
  while ((n = ::read(rd.get(), buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  int st = 0;
  if (pid > 0) ::waitpid(pid, &st, 0);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

// Can this user make a user namespace (what unprivileged bwrap needs)? Tried in a child.
bool userns_works() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(::unshare(CLONE_NEWUSER) == 0 ? 0 : 1);
  int st = 0;
  return pid > 0 && ::waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

}  // namespace

int cmd_probe(bool json) {
  const std::string bwrap = find_bwrap(std::nullopt);
  const std::string version = bwrap_version(bwrap);
  const bool userns = userns_works();
  const SeccompFeatures sc = probe_seccomp();
  const bool root = ::geteuid() == 0;
  const bool can_sandbox = !bwrap.empty() && (root || userns);
  // Host mounts every sandbox carries that bwrap may fail to make read-only.
  auto host_mounts = init::load_mount_table();
  const std::vector<OddMount> odd =
      host_mounts ? find_odd_mounts(*host_mounts) : std::vector<OddMount>{};
  // The resource caps the default vigil.limits get here (cap_plan.h): which mechanism.
  const auto caps = build_cap_plan(LimitsOptions{}, probe_host_limits());
  const std::string caps_text = caps ? describe_cap_plan(*caps) : caps.error().message;

  if (json) {
    nlohmann::json j = {
        {"bwrap", {{"path", bwrap}, {"version", version}}},
        {"user_namespaces", userns},
        {"root", root},
        {"seccomp",
         {{"user_notif", sc.user_notif},
          {"notif_continue", sc.notif_continue},
          {"wait_killable_recv", sc.wait_killable_recv},
          {"sync_wake_up", sc.sync_wake_up},
          {"addfd_send", sc.addfd_send},
          {"witness", sc.addfd_send ? "gatekeeper" : "best-effort"},
          {"error", sc.error}}},
        {"limits",
         {{"enforced", static_cast<bool>(caps)},
          {"processes", caps ? cap_via_name(caps->processes_via) : "none"},
          {"memory", caps ? cap_via_name(caps->memory_via) : "none"},
          {"file_size", caps ? cap_via_name(caps->file_via) : "none"},
          {"detail", caps_text}}},
        {"sandbox_available", can_sandbox},
    };
    j["odd_mounts"] = nlohmann::json::array();
    for (const auto& m : odd) {
      j["odd_mounts"].push_back({{"path", m.mount_point}, {"fstype", m.fstype}, {"what", m.what}});
    }
    // display-safe: JSON dumped ensure_ascii: no byte outside printable ASCII
    std::printf("%s\n", j.dump(2, ' ', true, nlohmann::json::error_handler_t::replace).c_str());
    return can_sandbox ? 0 : 1;
  }
  auto line = [](bool ok, const char* what, const std::string& detail, const char* fix) {
    // display-safe: what is a literal at every call below; detail is escaped
    std::printf("%-4s %-42s %s\n", ok ? "ok" : "MISS", what, escape_text(detail).c_str());
    // display-safe: fix is a literal at every call below
    if (!ok && fix != nullptr) std::printf("     fix: %s\n", fix);
  };
  line(!bwrap.empty(), "bubblewrap",
       bwrap.empty() ? "not found on PATH" : bwrap + " (" + version + ")",
       "apt-get install bubblewrap");
  line(userns || root, "user namespaces",
       userns ? "unprivileged user namespaces work" : "unshare(CLONE_NEWUSER) refused",
       "sysctl -w kernel.unprivileged_userns_clone=1 (Debian) or user.max_user_namespaces>0; "
       "on Ubuntu 24.04+ allow bwrap in AppArmor");
  line(sc.user_notif, "seccomp USER_NOTIF (observer)", sc.error.empty() ? "" : sc.error,
       "a kernel >= 5.0 with CONFIG_SECCOMP_FILTER");
  line(sc.notif_continue, "USER_NOTIF_FLAG_CONTINUE", "", "a kernel >= 5.5");
  line(sc.wait_killable_recv, "FILTER_FLAG_WAIT_KILLABLE_RECV", "optional", nullptr);
  line(sc.sync_wake_up, "USER_NOTIF_FD_SYNC_WAKE_UP (fast round trips)", "optional", nullptr);
  line(sc.addfd_send, "NOTIF_ADDFD + ADDFD_FLAG_SEND (gatekeeper)",
       sc.addfd_send ? "vigil-init performs write-intent calls itself"
                     : "witness: best-effort (writes are observed, not performed, so a racing "
                       "thread can write under a name the log does not show)",
       "a kernel >= 5.14");
  for (const auto& m : odd) {
    // display-safe: the path and type are escaped; the rest are literals
    std::printf("note %-42s %s\n", escape_text(m.mount_point).c_str(),
                escape_text(m.fstype + ": " + m.what).c_str());
  }
  // display-safe: a literal
  if (!odd.empty()) std::printf("     these host mounts: %s\n", kOddMountFix);
  line(static_cast<bool>(caps), "resource caps (vigil.limits defaults)", caps_text,
       "see the message: a cgroup vigil may manage, or vigil.limits.processes set to 0");
  std::printf("%s\n", can_sandbox
                          ? "vigil can sandbox commands here."
                          : "vigil CANNOT sandbox commands here: fix the MISS lines above.");
  return can_sandbox ? 0 : 1;
}

}  // namespace vigil
