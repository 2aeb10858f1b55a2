// Rule ids (supervisor/core/policy/rule_id.h) and the judge of recorded verdicts under a policy
// (supervisor/report/policy_judge.h): tables over a policy built by hand, through the real plan
// (build_plan + decide) and the real egress decision.
#include "supervisor/report/policy_judge.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "supervisor/core/policy/rule_id.h"

namespace vigil {
namespace {

PathRule dir_rule(const char* written, const char* path, const char* origin) {
  PathRule r;
  r.written = written;
  r.literal = r.resolved = path;
  r.origin = origin;
  r.kind = PathKind::kDir;
  return r;
}

Policy sample_policy() {
  Policy p;
  p.home = "/home/u";
  p.cwd = "/home/u/proj";
  p.fs.allow_write.push_back(dir_rule(".", "/home/u/proj", "filesystem.allowWrite[0]"));
  p.fs.allow_write.push_back(dir_rule("~/.npm", "/home/u/.npm", "filesystem.allowWrite[1]"));
  p.fs.deny_write.push_back(dir_rule("secrets", "/home/u/proj/secrets", "filesystem.denyWrite[0]"));
  p.fs.deny_read.push_back(dir_rule("~/.ssh", "/home/u/.ssh", "filesystem.denyRead[0]"));
  p.net.allowed_domains = {"*.github.com", "127.0.0.1:8080"};
  p.net.denied_domains = {"evil.github.com"};
  return p;
}

events::FsWrite write_to(const std::string& path, Verdict recorded = Verdict::kDenied,
                         const std::string& syscall = "openat", std::uint64_t flags = 0101) {
  events::FsWrite w;
  w.pid = 2;
  w.syscall = syscall;
  w.path = w.resolved = path;
  w.flags = flags;
  w.verdict = recorded;
  return w;
}

TEST(RuleIdTest, FilesystemOriginsTable) {
  const Policy p = sample_policy();
  struct Row {
    std::string origin, id;
  };
  for (const Row& r : std::vector<Row>{
           {"filesystem.allowWrite[1]", "filesystem.allowWrite[1] \"~/.npm\""},
           {"filesystem.denyWrite[0]", "filesystem.denyWrite[0] \"secrets\""},
           {"filesystem.denyRead[0]", "filesystem.denyRead[0] \"~/.ssh\""},
           {"mandatory: .bashrc", "mandatory deny .bashrc"},
           {"mandatory: .git/hooks", "mandatory deny .git/hooks"},
           {"default", "default deny (outside every writable root)"},
           {"something else", "something else"},
       }) {
    EXPECT_EQ(fs_rule_id(p, r.origin), r.id) << r.origin;
  }
  EXPECT_EQ(quoted_entry("a\"b\\c"), "\"a\\\"b\\\\c\"");
}

TEST(RuleIdTest, NetworkTable) {
  const Policy p = sample_policy();
  struct Row {
    bool allowed;
    std::string rule, refused_by, check, id;
  };
  for (const Row& r : std::vector<Row>{
           {true, "*.github.com", "", "", "network.allowedDomains[0] \"*.github.com\""},
           {true, "127.0.0.1:8080", "", "", "network.allowedDomains[1] \"127.0.0.1:8080\""},
           {true, "added.example", "", "", "network.allowedDomains \"added.example\""},
           {false, "evil.github.com", "denied-domain", "", "network.deniedDomains[0] \"evil.github.com\""},
           {false, "", "not-allowed", "", "default deny (no network.allowedDomains entry matches)"},
           {false, "", "address-guard", "loopback", "address guard (loopback)"},
           {false, "", "malformed-host", "", "refused (malformed-host)"},
           {true, "ask:session", "", "", "ask mode (session)"},
       }) {
    EXPECT_EQ(net_rule_id(p.net, r.allowed, r.rule, r.refused_by, r.check), r.id) << r.rule;
  }
}

TEST(PolicyJudgeTest, WritesTable) {
  const Policy p = sample_policy();
  const Plan plan = build_plan(p, {});
  struct Row {
    events::FsWrite w;
    std::optional<Verdict> verdict;
    std::string id;
  };
  events::FsWrite failed = write_to("/etc/x", Verdict::kAllowed, "mkdir", 0);
  failed.result = "EEXIST";
  events::FsWrite rename_out = write_to("/home/u/proj/b", Verdict::kDenied, "rename", 0);
  rename_out.from = rename_out.from_resolved = "/home/u/proj/secrets/a";
  events::FsWrite temp = write_to("/tmp/vigil-0/abc/tmp/x", Verdict::kAllowed);
  for (const Row& r : std::vector<Row>{
           {write_to("/home/u/proj/src/a.c"), Verdict::kAllowed, "filesystem.allowWrite[0] \".\""},
           {write_to("/home/u/.npm/_cacache/tmp/1234"), Verdict::kAllowed,
            "filesystem.allowWrite[1] \"~/.npm\""},
           {write_to("/home/u/proj/secrets/k"), Verdict::kDenied, "filesystem.denyWrite[0] \"secrets\""},
           {write_to("/home/u/proj/sub/.bashrc"), Verdict::kDenied, "mandatory deny .bashrc"},
           {write_to("/home/u/proj/a/.vscode/settings.json"), Verdict::kDenied,
            "mandatory deny .vscode"},
           // Removing a protected name is not the creation the gatekeeper refuses.
           {write_to("/home/u/proj/sub/.bashrc", Verdict::kAllowed, "unlink", 0), Verdict::kAllowed,
            "filesystem.allowWrite[0] \".\""},
           {write_to("/home/u/.ssh/k"), Verdict::kEphemeral, "filesystem.denyRead[0] \"~/.ssh\""},
           {write_to("/etc/passwd"), Verdict::kDenied, "default deny (outside every writable root)"},
           {write_to("/dev/null", Verdict::kAllowed), std::nullopt, "the sandbox's own /dev, /proc and /sys"},
           {failed, std::nullopt, "no rule (the call failed on its own: EEXIST)"},
           {rename_out, Verdict::kDenied, "filesystem.denyWrite[0] \"secrets\""},
           {temp, std::nullopt, "session temp dir \"$TMPDIR\""},
       }) {
    const FsJudged j = judge_write(p, plan, r.w, "/tmp/vigil-0");
    EXPECT_EQ(j.verdict, r.verdict) << r.w.resolved;
    EXPECT_EQ(j.rule_id, r.id) << r.w.resolved;
  }
}

TEST(PolicyJudgeTest, RecordedRuleIdSaysWhenTheSandboxDecidedOtherwise) {
  const Policy p = sample_policy();
  const Plan plan = build_plan(p, {});
  EXPECT_EQ(record_rule_id(p, plan, write_to("/home/u/proj/x", Verdict::kAllowed)),
            "filesystem.allowWrite[0] \".\"");
  events::FsWrite odd = write_to("/home/u/proj/x", Verdict::kDenied);
  odd.reason = "read-only file system";
  EXPECT_EQ(record_rule_id(p, plan, odd),
            "rule not derived (the sandbox decided: read-only file system)");
  EXPECT_EQ(shown_rule_id(events::FsWrite{}), "rule not recorded");
}

TEST(PolicyJudgeTest, ConnectionsTable) {
  const Policy p = sample_policy();
  auto m = proxy::DomainMatcher::build(p.net);
  ASSERT_TRUE(m) << m.error().message;
  struct Row {
    std::string host;
    std::uint16_t port;
    std::string refused_by;
    events::NetVerdict verdict;
    std::string id;
  };
  for (const Row& r : std::vector<Row>{
           {"api.github.com", 443, "", events::NetVerdict::kAllowed,
            "network.allowedDomains[0] \"*.github.com\""},
           {"evil.github.com", 443, "", events::NetVerdict::kDenied,
            "network.deniedDomains[0] \"evil.github.com\""},
           {"example.org", 443, "", events::NetVerdict::kDenied,
            "default deny (no network.allowedDomains entry matches)"},
           {"127.0.0.1", 8080, "address-guard", events::NetVerdict::kAllowed,
            "network.allowedDomains[1] \"127.0.0.1:8080\""},
           {"x.github.com", 443, "address-guard", events::NetVerdict::kDenied, "address guard"},
       }) {
    events::NetDecision d;
    d.proto = events::NetProto::kConnect;
    d.host = r.host;
    d.port = r.port;
    d.refused_by = r.refused_by;
    const NetJudged j = judge_net(p.net, *m, d);
    EXPECT_EQ(j.verdict, r.verdict) << r.host;
    EXPECT_EQ(j.rule_id, r.id) << r.host;
  }
}

}  // namespace
}  // namespace vigil
