// `vigil doctor` (and its alias `probe`): the facts (I/O) and their findings (pure).
#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>

#include "filters/seccomp_probe.h"
#include "supervisor/cli/commands.h"
#include "supervisor/core/base/pipe.h"
#include "supervisor/core/base/unique_fd.h"
#include "observer/mount_table.h"
#include "supervisor/cli/doctor.h"
#include "supervisor/cli/doctor_state.h"
#include "supervisor/launch/odd_mounts.h"
#include "supervisor/launch/resource_caps.h"
#include "supervisor/core/wire/env_block.h"
#include "supervisor/orchestrator/session_runner.h"

namespace vigil {
namespace {

// Runs argv (absolute path) with stdout+stderr on a pipe; returns (exit status, output).
// bwrap runs with vigil's own minimal environment, as for a command (wire/env_block.h).
std::pair<int, std::string> run_capture(const std::vector<std::string>& argv) {
  static const std::vector<std::string> host_env = wire::host_helper_environment();
  std::vector<char*> cenv;
  for (const auto& e : host_env) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);
  auto pipe = make_pipe();
  if (!pipe) return {-1, pipe.error().message};
  UniqueFd rd = std::move(pipe->read), wr = std::move(pipe->write);
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(wr.get(), 1);
    ::dup2(wr.get(), 2);
    ::execve(cargv[0], cargv.data(), cenv.data());
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
    const unsigned long long caps = std::strtoull(line.c_str() + 7, nullptr, 16);
    f.cap_sys_admin_bounding = ((caps >> 21) & 1ULL) != 0;  // CAP_SYS_ADMIN is 21
  }
  const SeccompFeatures sc = probe_seccomp();
  f.seccomp_user_notif = sc.user_notif;
  f.seccomp_notif_recv = sc.notif_continue;  // the probe's round trip received one
  f.seccomp_sync_wake_up = sc.sync_wake_up;
  f.seccomp_wait_killable_recv = sc.wait_killable_recv;
  f.seccomp_addfd_send = sc.addfd_send;
  f.seccomp_error = sc.error;
  // Host mounts every sandbox carries that bwrap may fail to make read-only.
  // Then tried: a sandbox bwrap makes as `vigil run` does (everything bound read-only),
  // with this user's privileges, reporting its own mount table.
  if (auto host_mounts = init::load_mount_table()) {
    f.odd_mounts = find_odd_mounts(*host_mounts);
    if (!f.bwrap.empty() && f.bwrap_userns_error.empty()) {
      auto [trial_status, trial_out] = run_capture({f.bwrap, "--unshare-all", "--die-with-parent", "--ro-bind",
                                        "/", "/", "--dev", "/dev", "--proc", "/proc", "--",
                                        "/bin/cat", "/proc/self/mountinfo"});
      auto trial = trial_status == 0 ? init::parse_mountinfo(trial_out)
                               : Result<std::vector<init::Mount>>(
                                     make_error(Errc::kSystem, first_line(trial_out)));
      if (trial) {
        judge_in_trial(*host_mounts, *trial, &f.odd_mounts);
      } else {
        f.trial_error = trial.error().message.empty() ? "exit " + std::to_string(trial_status)
                                                      : trial.error().message;
      }
    }
  }
  // The resource caps the default vigil.limits get here (cap_plan.h): which mechanism.
  const auto caps = build_cap_plan(LimitsOptions{}, probe_host_limits());
  f.caps.enforced = static_cast<bool>(caps);
  f.caps.detail = caps ? describe_cap_plan(*caps) : caps.error().message;
  if (caps) {
    f.caps.processes = cap_via_name(caps->processes_via);
    f.caps.memory = cap_via_name(caps->memory_via);
    f.caps.file_size = cap_via_name(caps->file_via);
  }
  return f;
}

}  // namespace

int cmd_probe(bool json) {
  const HostFacts facts = gather();
  auto findings = diagnose(facts);
  if (auto dir = default_export_dir(std::getenv("XDG_STATE_HOME"), std::getenv("HOME")); dir) {
    if (auto status = load_status(*dir + "/status.json"); status) {
      for (auto& f : export_spool_findings(*status, static_cast<std::int64_t>(std::time(nullptr))))
        findings.push_back(std::move(f));
    }
  }
  // The state vigil keeps (issue 38.6): where, how big, how to prune.
  const StateFacts state = gather_state(std::getenv("XDG_STATE_HOME"), std::getenv("HOME"));
  std::string text;
  if (json) {
    auto j = nlohmann::ordered_json::parse(render_doctor_json(findings, &facts));
    j["state"] = state_json(state);
    text = j.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace) + "\n";
  } else {
    text = render_doctor(findings) + render_state(state);
  }
  // display-safe: render_doctor escapes each detail and fix; the JSON is dumped ensure_ascii
  std::fputs(text.c_str(), stdout);
  return can_sandbox(findings) ? 0 : 1;
}

}  // namespace vigil
