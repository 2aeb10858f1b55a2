// Test-only: the policies the Seatbelt tests share, built as values (no filesystem), with
// macOS-shaped paths: /Users/dev/proj is the project, the session's temp dir is spelled
// /tmp/... in the settings and resolves to /private/tmp/... as it does on a Mac.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "seatbelt/profile_builder.h"
#include "supervisor/core/policy/mandatory_denies.h"
#include "supervisor/core/fs/path_verdict.h"

namespace vigil::sbfix {

inline const std::string kHome = "/Users/dev";
inline const std::string kProj = "/Users/dev/proj";
inline const std::string kTag = "vigil_0123456789abcdef";

inline PathRule rule(const std::string& resolved, const std::string& origin,
                     PathKind kind = PathKind::kDir, const std::string& literal = "") {
  PathRule r;
  r.written = literal.empty() ? resolved : literal;
  r.literal = literal.empty() ? resolved : literal;
  r.resolved = resolved;
  r.origin = origin;
  r.kind = kind;
  r.first_missing = kind == PathKind::kMissing ? resolved : "";
  return r;
}

inline const MandatoryDeny* mandatory(std::string_view relpath) {
  for (const auto& d : mandatory_denies()) {
    if (d.relpath == relpath) return &d;
  }
  return nullptr;
}

// A policy, what the scan found, and the session values: everything the builder reads.
struct Case {
  std::string name;
  Policy policy;
  std::vector<ProtectedPath> found;
  SeatbeltSession session{kTag, {3128, 1080}};

  Plan plan() const { return build_plan(policy, found); }
};

// The default: the project writable, the session temp dir writable, and what the Linux
// scan reports for a project holding a .git directory: .git/hooks and .git/config exist,
// every other protected name is missing at the root and gets a placeholder.
inline Case default_case(std::string name = "default") {
  Case c;
  c.name = std::move(name);
  c.policy.source = "<embedded default>";
  c.policy.cwd = kProj;
  c.policy.home = kHome;
  c.policy.fs.allow_write.push_back(rule(kProj, "default: the working directory"));
  PathRule tmp =
      rule("/private/tmp/vigil-s/tmp", "session temp dir", PathKind::kDir, "/tmp/vigil-s/tmp");
  tmp.session_temp = true;
  c.policy.fs.allow_write.push_back(tmp);
  c.found.push_back(
      ProtectedPath{kProj + "/.git/hooks", mandatory(".git/hooks"), true, DenyShape::kDir});
  c.found.push_back(
      ProtectedPath{kProj + "/.git/config", mandatory(".git/config"), true, DenyShape::kFile});
  bool claude_planned = false;
  for (const auto& d : mandatory_denies()) {
    if (d.relpath.starts_with(".git/")) continue;
    if (d.relpath.starts_with(".claude/")) {
      if (claude_planned) continue;
      claude_planned = true;
      c.found.push_back(ProtectedPath{kProj + "/.claude", &d, false, DenyShape::kDir});
      continue;
    }
    c.found.push_back(ProtectedPath{kProj + "/" + std::string(d.relpath), &d, false, d.shape});
  }
  return c;
}

// The ten policies with golden profiles (tests/data/seatbelt/<name>.sb and .params).
inline std::vector<Case> golden_cases() {
  std::vector<Case> out;
  out.push_back(default_case("default"));
  {
    // Hide the home directory, re-open one config directory; the project (inside the
    // hidden home) stays readable and writable because a writable root re-opens reads.
    Case c = default_case("deny_read_allow_read");
    c.policy.fs.deny_read.push_back(rule(kHome, "filesystem.denyRead[0]"));
    c.policy.fs.deny_read.push_back(
        rule("/private/etc/ssh", "filesystem.denyRead[1]", PathKind::kDir, "/etc/ssh"));
    c.policy.fs.allow_read.push_back(rule(kHome + "/.config/git", "filesystem.allowRead[0]"));
    out.push_back(std::move(c));
  }
  {
    Case c = default_case("deny_write");
    c.policy.fs.deny_write.push_back(rule(kProj + "/secrets", "filesystem.denyWrite[0]"));
    c.policy.fs.deny_write.push_back(
        rule(kProj + "/build/out.bin", "filesystem.denyWrite[1]", PathKind::kFile));
    PathRule missing = rule(kProj + "/gen/new/x", "filesystem.denyWrite[2]", PathKind::kMissing);
    missing.first_missing = kProj + "/gen";
    c.policy.fs.deny_write.push_back(missing);
    out.push_back(std::move(c));
  }
  {
    Case c = default_case("weaker_isolation");
    c.policy.macos.enable_weaker_network_isolation = true;
    out.push_back(std::move(c));
  }
  {
    Case c = default_case("apple_events");
    c.policy.macos.allow_apple_events = true;
    out.push_back(std::move(c));
  }
  {
    Case c = default_case("git_config_allowed");
    c.policy.fs.allow_git_config = true;
    out.push_back(std::move(c));
  }
  {
    Case c = default_case("no_network");
    c.session.proxy_ports.clear();
    out.push_back(std::move(c));
  }
  {
    Case c = default_case("local_sockets_mach");
    c.policy.net.allow_local_binding = true;
    c.policy.net.allow_unix_sockets = {"/var/run/docker.sock"};
    c.policy.net.allow_mach_lookup = {"com.example.helper", "com.example.prefix.*"};
    out.push_back(std::move(c));
  }
  {
    // Paths that would break a profile built by splicing text: they must stay values.
    Case c = default_case("hostile_paths");
    c.policy.fs.allow_write.push_back(
        rule(kHome + "/we\"ird)\n(allow default)", "filesystem.allowWrite[0]"));
    c.policy.fs.deny_read.push_back(rule(kHome + "/x;y\\z (copy)", "filesystem.denyRead[0]"));
    out.push_back(std::move(c));
  }
  {
    // Nested writable roots, a root under /tmp (both spellings), a read-denied file
    // inside the project, pseudo-terminals on.
    Case c = default_case("nested_roots_pty");
    c.policy.fs.allow_write.push_back(
        rule("/private/tmp/build", "filesystem.allowWrite[0]", PathKind::kDir, "/tmp/build"));
    c.policy.fs.allow_write.push_back(rule(kProj + "/sub", "filesystem.allowWrite[1]"));
    c.policy.fs.deny_read.push_back(
        rule(kProj + "/.env", "filesystem.denyRead[0]", PathKind::kFile));
    c.policy.fs.deny_write.push_back(rule(kProj + "/sub/vendor", "filesystem.denyWrite[0]"));
    c.policy.macos.allow_pty = true;
    out.push_back(std::move(c));
  }
  return out;
}

inline std::map<std::string, std::string> param_map(const SeatbeltProfile& p) {
  std::map<std::string, std::string> m;
  for (const auto& x : p.params) m[x.name] = x.value;
  return m;
}

}  // namespace vigil::sbfix
