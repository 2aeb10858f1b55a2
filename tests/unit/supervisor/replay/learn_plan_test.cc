// `vigil learn`'s pure parts (supervisor/replay/learn_plan.h): which names are volatile, the
// stable directory a denied write coalesces to, the learner's choices over records, and
// the settings it writes.
#include "supervisor/replay/learn_plan.h"

#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

namespace vigil {
namespace {

TEST(LearnPlanTest, VolatileNamesTable) {
  struct Row {
    std::string name;
    bool is_volatile;
  };
  for (const Row& r : std::vector<Row>{
           {"tmp", true},
           {".tmp", true},
           {"tmp.qZzQjNkAu2", true},
           {"30044ce5-1b2c-4d5e-8f90-123456789abc", true},
           {"98ea6e4f216f2fb4", true},
           {"1733102400", true},
           {"pip-build-x7Ab3c", true},
           {"npm-12345-a1b2c3d4", true},
           {"", true},
           {".npm", false},
           {".cargo", false},
           {"_cacache", false},
           {"registry", false},
           {"go-build", false},
           {"node_modules", false},
           {"python3.11", false},
           {"deadbeef", false},  // 8 hex letters, no digit: a word
           {"v1.2.3", false},
       }) {
    EXPECT_EQ(is_volatile_name(r.name), r.is_volatile) << r.name;
  }
}

TEST(LearnPlanTest, StableDirTable) {
  const std::string home = "/home/u";
  struct Row {
    std::string path;
    bool is_dir;
    std::string dir;
  };
  for (const Row& r : std::vector<Row>{
           {"/home/u/.npm/_cacache/tmp/30044ce5-1b2c", false, "/home/u/.npm"},
           {"/home/u/.npm/_logs/2026-12-01T15_00_00_000Z-debug-0.log", false, "/home/u/.npm"},
           {"/home/u/.npm", true, "/home/u/.npm"},
           {"/home/u/.npm", false, ""},  // a file straight in $HOME
           {"/home/u/.gitconfig", false, ""},
           {"/home/u/.cache/pip/http/x", false, "/home/u/.cache/pip"},
           {"/home/u/.cache/tmp.aB3dE9xx/x", false, "/home/u/.cache"},
           {"/home/u/.config/gh/hosts.yml", false, "/home/u/.config/gh"},
           {"/home/u/.local/share/pnpm/store/v3/x", false, "/home/u/.local/share/pnpm"},
           {"/home/u/.cargo/registry/cache/x.crate", false, "/home/u/.cargo"},
           {"/tmp/tmp.qZzQjNkAu2/x", false, ""},
           {"/tmp/build-cache/a/b", false, "/tmp/build-cache"},
           {"/tmp/scratch.txt", false, ""},
           {"/var/tmp/ccache/x", false, "/var/tmp/ccache"},
           {"/opt/tool/cache/x", false, "/opt/tool/cache"},
           {"/opt/tool/x", false, ""},
           {"/var/cache/foo/x", false, "/var/cache/foo"},
           {"/var/cache/x", false, ""},
           {"/var/log/x", false, ""},
           {"/var/log/app/x.log", false, "/var/log/app"},
           {"/srv/x", false, ""},
           {"/x", false, ""},
           {"/", true, ""},
       }) {
    EXPECT_EQ(stable_dir(r.path, home, r.is_dir), r.dir) << r.path;
  }
}

events::Event denied_write(const std::string& path, const std::string& syscall = "openat") {
  events::FsWrite w;
  w.pid = 2;
  w.syscall = syscall;
  w.path = w.resolved = path;
  w.flags = 0101;
  w.verdict = Verdict::kDenied;
  events::Event e;
  e.body = w;
  return e;
}

events::Event denied_net(const std::string& host, std::uint16_t port) {
  events::NetDecision d;
  d.proto = events::NetProto::kConnect;
  d.host = host;
  d.port = port;
  d.verdict = events::NetVerdict::kDenied;
  events::Event e;
  e.body = d;
  return e;
}

TEST(LearnPlanTest, LearnerCoalescesAndLeavesProtectedPathsDenied) {
  Policy p;
  p.home = "/home/u";
  PathRule ws;
  ws.written = ".";
  ws.literal = ws.resolved = "/home/u/proj";
  ws.origin = "filesystem.allowWrite[0]";
  ws.kind = PathKind::kDir;
  p.fs.allow_write.push_back(ws);
  PathRule secret = ws;
  secret.written = "~/.aws";
  secret.literal = secret.resolved = "/home/u/.aws";
  secret.origin = "filesystem.denyRead[0]";
  p.fs.deny_read.push_back(secret);
  p.net.denied_domains = {"bad.example"};
  const Plan plan = build_plan(p, {});
  auto m = proxy::DomainMatcher::build(p.net);
  ASSERT_TRUE(m);
  Learner l(p, plan, *m, "/home/u/.config/vigil/settings.json");
  for (const auto& e : std::vector<events::Event>{
           denied_write("/home/u/.npm/_cacache/tmp/1"), denied_write("/home/u/.npm/_logs/a.log"),
           denied_write("/home/u/.npm/_cacache/index-v5/ab/cd"),
           denied_write("/home/u/proj/sub/.bashrc"), denied_write("/home/u/.aws/x/y"),
           denied_write("/home/u/.config/vigil/x"), denied_write("/etc/x"),
           denied_write("/home/u/proj/f"),  // allowed by the current settings
           denied_net("registry.npmjs.org", 443), denied_net("registry.npmjs.org", 443),
           denied_net("bad.example", 443), denied_net("::1", 8080)}) {
    l.take(e);
  }
  const LearnResult r = l.result();
  ASSERT_EQ(r.allow_write.size(), 1U);
  EXPECT_EQ(r.allow_write[0].entry, "~/.npm");
  EXPECT_EQ(r.allow_write[0].count, 3U);
  ASSERT_EQ(r.allowed_domains.size(), 2U);
  EXPECT_EQ(r.allowed_domains[0].entry, "[::1]:8080");
  EXPECT_EQ(r.allowed_domains[1].entry, "registry.npmjs.org:443");
  EXPECT_EQ(r.already_allowed, 1U);
  std::string left;
  for (const auto& x : r.left) left += x.target + "  " + x.why + "\n";
  for (const char* want : {"/home/u/proj/sub/.bashrc", "mandatory deny .bashrc",
                           "filesystem.denyRead[0] \"~/.aws\" hides it", "holds the settings file",
                           "/etc/x  a system directory", "bad.example:443  network.deniedDomains[0]"}) {
    EXPECT_NE(left.find(want), std::string::npos) << want << "\n" << left;
  }
}

// Issue 38.7: a host the session's deniedDomains refused is never proposed, even when
// learn runs against settings that do not deny it (the embedded default, another file).
TEST(LearnPlanTest, AHostTheSessionDeniedOnPurposeIsNeverProposed) {
  Policy p;
  p.home = "/home/u";
  const Plan plan = build_plan(p, {});
  auto m = proxy::DomainMatcher::build(p.net);  // no deniedDomains now
  ASSERT_TRUE(m);
  Learner l(p, plan, *m, "");
  events::Event denied = denied_net("pastebin.com", 443);
  auto& d = std::get<events::NetDecision>(denied.body);
  d.rule = "pastebin.com";
  d.refused_by = std::string(events::refused_by::kDeniedDomain);
  l.take(denied);
  l.take(denied_net("registry.npmjs.org", 443));  // refused for not being allowed
  const LearnResult r = l.result();
  ASSERT_EQ(r.allowed_domains.size(), 1U);
  EXPECT_EQ(r.allowed_domains[0].entry, "registry.npmjs.org:443");
  ASSERT_EQ(r.left.size(), 1U);
  EXPECT_EQ(r.left[0].target, "pastebin.com:443");
  EXPECT_NE(r.left[0].why.find("network.deniedDomains \"pastebin.com\""), std::string::npos)
      << r.left[0].why;
}

TEST(LearnPlanTest, LearnedSettingsAppendToWhatIsThere) {
  LearnResult r;
  r.allow_write.push_back({"~/.npm", "/home/u/.npm", 1, ""});
  r.allowed_domains.push_back({"127.0.0.1:8080", "", 1, ""});
  auto from_default = learned_settings("", r);
  ASSERT_TRUE(from_default);
  EXPECT_EQ(*from_default,
            "{\n  \"filesystem\": {\n    \"allowWrite\": [\n      \".\",\n      \"~/.npm\"\n    ]\n  "
            "},\n  \"network\": {\n    \"allowedDomains\": [\n      \"127.0.0.1:8080\"\n    ]\n  }\n}\n");
  auto extended = learned_settings(R"({"network": {"allowedDomains": ["a.example"]}, "x": 1})", r);
  ASSERT_TRUE(extended);
  EXPECT_NE(extended->find("\"a.example\",\n      \"127.0.0.1:8080\""), std::string::npos) << *extended;
  EXPECT_LT(extended->find("\"network\""), extended->find("\"filesystem\"")) << "key order kept";
  EXPECT_FALSE(learned_settings("[1]", r));
  EXPECT_FALSE(learned_settings(R"({"filesystem": {"allowWrite": "x"}})", r));
}

}  // namespace
}  // namespace vigil
