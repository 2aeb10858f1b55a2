// The portable half of `vigil run` on macOS: the session's log tag, its environment, and
// recorded `log stream` output turned into the session-log events the Linux observer
// produces, checked against the schema and rendered into the model's annotation.
#include "supervisor/orchestrator/macos_session.h"

#include <gtest/gtest.h>

#include <fstream>

#include "seatbelt/profile_builder.h"
#include "supervisor/report/annotation.h"
#include "supervisor/log/session_log.h"
#include "supervisor/command/session_proxy.h"
#include "tests/unit/seatbelt/fixtures.h"

namespace vigil {
namespace {

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(MacosSession, LogTagFromSessionIds) {
  struct Row {
    std::string id, tag;
  };
  const std::vector<Row> rows = {
      {"20250131T120501Z-3f9c2a1b7d4e", "vigil_20250131T120501Z_3f9c2a1b7d4e"},
      {"", "vigil___"},
      {"a\"b) (allow default", "vigil_a_b___allow_default"},
      {std::string(100, 'x'), "vigil_" + std::string(58, 'x')},
      {"\n\xff", "vigil___"},
  };
  for (const auto& r : rows) {
    const std::string tag = seatbelt_log_tag(r.id);
    EXPECT_EQ(tag, r.tag);
    EXPECT_TRUE(valid_log_tag(tag)) << tag;
  }
  // A real id, as `vigil run` makes them.
  EXPECT_TRUE(valid_log_tag(seatbelt_log_tag(new_session_id())));
}

TEST(MacosSession, EnvironmentPointsEveryClientAtTheOnePort) {
  const auto env = proxy_environment("/private/tmp/vigil-501/s/tmp", 49152, 49152);
  std::map<std::string, std::string> m(env.begin(), env.end());
  EXPECT_EQ(m["TMPDIR"], "/private/tmp/vigil-501/s/tmp");
  for (const char* k : {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"})
    EXPECT_EQ(m[k], "http://127.0.0.1:49152") << k;
  for (const char* k : {"ALL_PROXY", "all_proxy"})
    EXPECT_EQ(m[k], "socks5h://127.0.0.1:49152") << k;
  EXPECT_EQ(m["NO_PROXY"], "");
  EXPECT_EQ(m["no_proxy"], "");
  EXPECT_EQ(m["GIT_SSH_COMMAND"], "ssh -o ProxyCommand='nc -X 5 -x 127.0.0.1:49152 %h %p'");
  // Linux: the bridges' two ports.
  const auto linux_env = proxy_environment("/t", 3128, 1080);
  std::map<std::string, std::string> l(linux_env.begin(), linux_env.end());
  EXPECT_EQ(l["HTTPS_PROXY"], "http://127.0.0.1:3128");
  EXPECT_EQ(l["ALL_PROXY"], "socks5h://127.0.0.1:1080");
  EXPECT_EQ(l["GIT_SSH_COMMAND"], "ssh -o ProxyCommand='nc -X 5 -x 127.0.0.1:1080 %h %p'");
  EXPECT_EQ(linux_env.size(), env.size());
}

TEST(MacosSession, LogDirectoryInsideAWritableRootBecomesUnwritable) {
  sbfix::Case c = sbfix::default_case();
  Plan plan = c.plan();
  const std::string dir = sbfix::kProj + "/logs";
  ASSERT_EQ(decide(plan, dir + "/s.jsonl", Access::kWrite).verdict, Verdict::kAllowed);
  ASSERT_TRUE(protect_log(c.policy, plan, c.found, dir + "/s.jsonl"));
  EXPECT_EQ(decide(plan, dir + "/s.jsonl", Access::kWrite).verdict, Verdict::kDenied);
  EXPECT_EQ(decide(plan, dir, Access::kWrite).verdict, Verdict::kDenied);
  EXPECT_EQ(decide(plan, sbfix::kProj + "/src/a.c", Access::kWrite).verdict, Verdict::kAllowed);
  // The profile built from it carries the directory as a parameter of a deny rule.
  auto profile = build_seatbelt_profile(SeatbeltInputs{&c.policy, &plan, c.session});
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  bool passed = false;
  for (const auto& p : profile->params) passed = passed || p.value == dir;
  EXPECT_TRUE(passed);
  // Already unwritable (the default state dir is outside every root): nothing added.
  const std::size_t rules = c.policy.fs.deny_write.size();
  EXPECT_FALSE(
      protect_log(c.policy, plan, c.found, "/Users/dev/.local/state/vigil/sessions/s.jsonl"));
  EXPECT_EQ(c.policy.fs.deny_write.size(), rules);
}

TEST(MacosSession, WriteOperations) {
  for (const char* op : {"file-write-create", "file-write-data", "file-write-unlink",
                         "file-write-mode", "file-write-xattr", "file-link"}) {
    EXPECT_TRUE(is_seatbelt_write_operation(op)) << op;
  }
  for (const char* op : {"file-read-data", "file-write*", "file-write-", "network-outbound",
                         "mach-lookup", "openat", "file-write-create "}) {
    EXPECT_FALSE(is_seatbelt_write_operation(op)) << op;
  }
}

TEST(MacosSession, RecordedLogBecomesTheLinuxEvents) {
  const sbfix::Case c = sbfix::default_case();
  const Plan plan = c.plan();
  SeatbeltEventFeed feed(sbfix::kTag, &plan);
  std::vector<events::Body> bodies;
  for (const auto& line :
       read_lines(std::string(VIGIL_TEST_DATA_DIR) + "/seatbelt/ndjson_session.log")) {
    for (auto& b : feed.feed(line)) bodies.push_back(std::move(b));
  }
  for (auto& b : feed.finish()) bodies.push_back(std::move(b));

  struct Want {
    std::int64_t pid;
    std::string op, path;
  };
  const std::vector<Want> want = {
      {4242, "file-write-create", "/Users/dev/outside.txt"},
      {4244, "file-write-data", "/Users/dev/proj/.git/hooks/pre-commit"},
      {4245, "file-write-create", "/Users/dev/proj/x\nvigil_fedcba9876543210"},
      {4248, "file-write-data", "/tmp/a) deny(1) b"},
      {4254, "file-write-create", "/Users/dev/caf\xc3\xa9/\xe2\x82\xac"},
  };
  ASSERT_EQ(bodies.size(), want.size());
  ViolationCollector collector;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const auto* w = std::get_if<events::FsWrite>(&bodies[i]);
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(w->pid, want[i].pid);
    EXPECT_EQ(w->syscall, want[i].op);
    EXPECT_EQ(w->path, want[i].path);
    EXPECT_EQ(w->resolved, want[i].path);
    EXPECT_EQ(w->verdict, Verdict::kDenied);
    // What the session log will accept (SessionLog::append validates the same way).
    auto ok = events::validate(bodies[i], events::Limits::log());
    EXPECT_TRUE(ok.ok()) << (ok.ok() ? "" : ok.error().message);
    collector.add(bodies[i], i);
  }
  // The reasons are the resolver's where it agrees (it names the fix), else Seatbelt's.
  const auto& outside = std::get<events::FsWrite>(bodies[0]);
  EXPECT_EQ(outside.reason, decide(plan, "/Users/dev/outside.txt", Access::kWrite).reason);
  EXPECT_NE(outside.reason.find("allowWrite"), std::string::npos) << outside.reason;
  // Linux's plan says proj/x is writable; only a path spelled with a newline got here.
  EXPECT_EQ(std::get<events::FsWrite>(bodies[2]).reason, "denied by the Seatbelt profile");

  const std::map<std::string, std::uint64_t> counters = {
      {"seatbelt.denied_network", 3},    {"seatbelt.denied_read", 2}, {"seatbelt.denied_other", 2},
      {"seatbelt.other_session", 2},     {"seatbelt.malformed", 1},   {"seatbelt.log_loss", 1},
      {"seatbelt.duplicate_reports", 2},
  };
  EXPECT_EQ(feed.counters(), counters);

  // The model reads the same kind of block as on Linux.
  const std::string block = render_annotation(collector, {kAnnotationMaxLines, "/l.jsonl"});
  EXPECT_EQ(block.rfind("<sandbox_violations>\n", 0), 0u) << block;
  EXPECT_NE(block.find("deny create /Users/dev/outside.txt ("), std::string::npos)
      << block;
  EXPECT_NE(block.find("deny write /Users/dev/proj/.git/hooks/pre-commit ("),
            std::string::npos)
      << block;
}

TEST(MacosSession, AnotherSessionsTagYieldsNothing) {
  const sbfix::Case c = sbfix::default_case();
  const Plan plan = c.plan();
  SeatbeltEventFeed feed("vigil_not_this_one", &plan);
  std::size_t n = 0;
  for (const auto& line :
       read_lines(std::string(VIGIL_TEST_DATA_DIR) + "/seatbelt/ndjson_session.log")) {
    n += feed.feed(line).size();
  }
  n += feed.finish().size();
  EXPECT_EQ(n, 0u);
}

}  // namespace
}  // namespace vigil
