// A spare sandbox is handed a command only when a fresh plan builds exactly the sandbox
// it is: every change of the policy, the network lists, the plan, the protected names or
// a mounted path's identity discards it. And the command's environment is what bwrap's
// --setenv would have made of it.
#include "supervisor/command/spare_sandbox.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace vigil {
namespace {

SpareShape a_spare() {
  SpareShape s;
  s.prepared.policy.cwd = "/ws";
  s.prepared.policy.home = "/home/u";
  PathRule root;
  root.written = root.literal = root.resolved = "/ws";
  root.kind = PathKind::kDir;
  s.prepared.policy.fs.allow_write.push_back(root);
  s.prepared.policy.net.allowed_domains = {"example.com"};
  s.prepared.plan.ops.push_back({OpKind::kWritable, "/ws", "default: working directory", "", true});
  s.prepared.settings_origin = "<embedded default>";
  s.identities = {{"/ws", 1, 2}};
  return s;
}

TEST(SpareSandbox, TheSamePlanTakesTheSpare) {
  const SpareShape s = a_spare();
  EXPECT_EQ(spare_mismatch(s, s.prepared, s.identities), "");
}

TEST(SpareSandbox, EveryChangeDiscardsIt) {
  struct Case {
    const char* what;
    std::function<void(PreparedSandbox&, std::vector<ExpectedMount>&)> change;
  };
  const Case cases[] = {
      {"an allowed domain added (policy.update)",
       [](PreparedSandbox& p, auto&) { p.policy.net.allowed_domains.push_back("x.org"); }},
      {"a denied domain", [](PreparedSandbox& p, auto&) { p.policy.net.denied_domains = {"x"}; }},
      {"a unix socket allowed",
       [](PreparedSandbox& p, auto&) { p.policy.net.allow_unix_sockets = {"/run/x.sock"}; }},
      {"a denyWrite entry",
       [](PreparedSandbox& p, auto&) {
         PathRule r;
         r.written = "secret";
         p.policy.fs.deny_write.push_back(r);
       }},
      {"a rule's path kind (the file now exists)",
       [](PreparedSandbox& p, auto&) { p.policy.fs.allow_write[0].kind = PathKind::kFile; }},
      {"a resource cap", [](PreparedSandbox& p, auto&) { p.policy.vigil.limits.processes = 7; }},
      {"the timeout", [](PreparedSandbox& p, auto&) { p.policy.vigil.limits.timeout_s = 3.0; }},
      {"capture off", [](PreparedSandbox& p, auto&) { p.policy.vigil.capture_enabled = false; }},
      {"capture caps", [](PreparedSandbox& p, auto&) { p.policy.vigil.capture_caps.max_file_bytes = 1; }},
      {"reads observed", [](PreparedSandbox& p, auto&) { p.policy.vigil.observer_reads = true; }},
      {"ask mode", [](PreparedSandbox& p, auto&) { p.policy.vigil.network_ask = true; }},
      {"ignoreViolations",
       [](PreparedSandbox& p, auto&) { p.policy.ignore_violations.push_back({"*", {"/x"}}); }},
      {"git safe directories",
       [](PreparedSandbox& p, auto&) { p.policy.git_safe_directories = {"/srv/repo"}; }},
      {"weaker nested sandbox", [](PreparedSandbox& p, auto&) { p.policy.weaker_nested_sandbox = true; }},
      {"bwrapPath", [](PreparedSandbox& p, auto&) { p.policy.bwrap_path = "/opt/bwrap"; }},
      {"an external proxy port",
       [](PreparedSandbox& p, auto&) { p.policy.net.external_http_port = 3128; }},
      {"a parent proxy", [](PreparedSandbox& p, auto&) { p.policy.net.parent_proxy.http = "http://p"; }},
      {"another working directory", [](PreparedSandbox& p, auto&) { p.policy.cwd = "/ws/sub"; }},
      {"a new protected name found by the scan",
       [](PreparedSandbox& p, auto&) { p.protected_paths.push_back({"/ws/.bashrc", nullptr, true}); }},
      {"a plan op more",
       [](PreparedSandbox& p, auto&) {
         p.plan.ops.push_back({OpKind::kDenyWrite, "/ws/.bashrc", "mandatory: .bashrc", "", true});
       }},
      {"an op that now exists", [](PreparedSandbox& p, auto&) { p.plan.ops[0].exists = false; }},
      {"another settings file", [](PreparedSandbox& p, auto&) { p.settings_origin = "--settings /s"; }},
      {"a new warning", [](PreparedSandbox& p, auto&) { p.warnings.push_back("w"); }},
      {"the workspace made again (another inode)",
       [](PreparedSandbox&, std::vector<ExpectedMount>& ids) { ids[0].ino = 3; }},
      {"a mounted path gone", [](PreparedSandbox&, std::vector<ExpectedMount>& ids) { ids.clear(); }},
  };
  for (const auto& c : cases) {
    const SpareShape s = a_spare();
    PreparedSandbox fresh = s.prepared;
    std::vector<ExpectedMount> ids = s.identities;
    c.change(fresh, ids);
    EXPECT_NE(spare_mismatch(s, fresh, ids), "") << c.what;
  }
}

TEST(SpareSandbox, TheEnvironmentIsWhatSetenvMakesOfIt) {
  using Env = std::vector<std::string>;
  using Set = std::vector<std::pair<std::string, std::string>>;
  const Env inherited = {"HOME=/root", "HTTP_PROXY=old"};
  struct Case {
    std::optional<Env> base;
    Set set;
    Env want;
  };
  const Case cases[] = {
      {std::nullopt, {}, inherited},
      {std::nullopt, {{"HTTP_PROXY", "new"}}, {"HOME=/root", "HTTP_PROXY=new"}},
      {Env{"A=1"}, {{"TMPDIR", "/t"}}, {"A=1", "TMPDIR=/t"}},
      {Env{}, {{"X", ""}}, {"X="}},
      // A name that only starts like the set one stays; the set one is added.
      {Env{"HTTP_PROXYX=1"}, {{"HTTP_PROXY", "p"}}, {"HTTP_PROXYX=1", "HTTP_PROXY=p"}},
      // setenv() replaces the first of duplicate entries, as bwrap's does.
      {Env{"A=1", "A=2"}, {{"A", "3"}}, {"A=3", "A=2"}},
  };
  for (const auto& c : cases) EXPECT_EQ(handed_environment(c.base, inherited, c.set), c.want);
}

}  // namespace
}  // namespace vigil
