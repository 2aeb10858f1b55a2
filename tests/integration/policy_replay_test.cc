// `vigil replay --policy NEW.json LOG` on a real session: a widened and a narrowed settings
// file each list exactly the verdicts that differ, with the deciding rule on each side;
// and every replay view names each verdict's rule.
//
// Network traffic: curl inside the sandbox reaches vigil's proxy only (--noproxy '': curl
// would go straight to 127.0.0.1, which the sandbox's own network namespace does not serve); the one allowed
// target is 127.0.0.1 on a port nothing listens on (the proxy's connect fails there).
#include <gtest/gtest.h>

#include <unistd.h>

#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

// A loopback port for the proxy to aim at (whether anything listens there does not
// matter: only the proxy's decision is under test).
int free_port() {
  static int next = 39000 + static_cast<int>(::getpid() % 2000);
  return next++;
}

using Change = std::pair<std::string, std::string>;  // "denied -> allowed", what + rules

// The changes replay --policy printed: the change, the target, and the two rule lines.
std::set<Change> changes_of(const std::string& out) {
  std::set<Change> got;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find(" -> ") == std::string::npos || line.starts_with(" ")) continue;
    if (!line.starts_with("denied") && !line.starts_with("allowed") &&
        !line.starts_with("ephemeral"))
      continue;
    const std::string change = line.substr(0, line.find("  "));
    std::string what = line.substr(30);
    what = what.substr(0, what.find("  (pid"));
    std::string was, now;
    std::getline(in, was);
    std::getline(in, now);
    auto trim = [](std::string s) { return s.substr(s.find_first_not_of(' ')); };
    got.insert({change, what + " | " + trim(was) + " | " + trim(now)});
  }
  return got;
}

class PolicyReplayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    p1 = free_port();
    p2 = free_port();
    write_file(conf / "session.json",
               R"({"filesystem": {"allowWrite": ["."]}, "network": {"allowedDomains": ["127.0.0.1:)" +
                   std::to_string(p1) + R"("]}})");
    const std::string script =
        "echo a > a; echo b > " + (out / "b") + "; mkdir sub; echo x > sub/.bashrc; " +
        "curl -s --noproxy '' -o /dev/null http://127.0.0.1:" + std::to_string(p1) + "/; " +
        "curl -s --noproxy '' -o /dev/null http://127.0.0.1:" + std::to_string(p2) + "/; true";
    const Outcome o = run_vigil({"run", "--settings", conf / "session.json", "--log", log(), "--",
                                 "sh", "-c", script},
                                ws.path());
    ASSERT_EQ(o.exit_code, 0) << o.err;
  }
  std::string log() const { return conf / "session.jsonl"; }
  std::string port(int p) const { return "127.0.0.1:" + std::to_string(p); }

  TempDir ws, out, conf;
  int p1 = 0, p2 = 0;
};

TEST_F(PolicyReplayTest, WidenedSettingsListExactlyWhatWouldBeAllowed) {
  write_file(conf / "wide.json", R"({"filesystem": {"allowWrite": [".", ")" + out.path() +
                                     R"("]}, "network": {"allowedDomains": ["127.0.0.1:)" +
                                     std::to_string(p1) + R"(", "127.0.0.1:)" +
                                     std::to_string(p2) + R"("]}})");
  const Outcome o = run_vigil({"replay", "--policy", conf / "wide.json", log()}, ws.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::set<Change> want = {
      {"denied -> allowed",
       "write " + (out / "b") +
           " | was: default deny (outside every writable root) | now: filesystem.allowWrite[1] \"" +
           out.path() + "\""},
      {"denied -> allowed",
       "http " + port(p2) +
           " | was: default deny (no network.allowedDomains entry matches) | now: "
           "network.allowedDomains[1] \"" +
           port(p2) + "\""},
  };
  EXPECT_EQ(changes_of(o.out), want) << o.out;
  // The protected name stays denied under any allowWrite: not listed as a change.
  EXPECT_EQ(o.out.find("sub/.bashrc"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("2 would be allowed, 0 denied"), std::string::npos) << o.out;
}

TEST_F(PolicyReplayTest, NarrowedSettingsListExactlyWhatWouldBeDenied) {
  write_file(conf / "narrow.json", R"({"filesystem": {"allowWrite": ["."], "denyWrite": ["a"]}})");
  const Outcome o = run_vigil({"replay", "--policy", conf / "narrow.json", log()}, ws.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::set<Change> want = {
      {"allowed -> denied", "write " + (ws / "a") +
                                " | was: filesystem.allowWrite[0] \".\" | now: "
                                "filesystem.denyWrite[0] \"a\""},
      {"allowed -> denied", "http " + port(p1) + " | was: network.allowedDomains[0] \"" + port(p1) +
                                "\" | now: default deny (no network.allowedDomains entry matches)"},
  };
  EXPECT_EQ(changes_of(o.out), want) << o.out;
  EXPECT_NE(o.out.find("0 would be allowed, 2 denied"), std::string::npos) << o.out;
}

TEST_F(PolicyReplayTest, TheSessionsOwnSettingsChangeNothing) {
  const Outcome o = run_vigil({"replay", "--policy", conf / "session.json", log()}, ws.path());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(changes_of(o.out).empty()) << o.out;
}

TEST_F(PolicyReplayTest, EveryViewNamesEachVerdictsRule) {
  const std::string deny_id = "mandatory deny .bashrc";
  const std::string net_id = "network.allowedDomains[0] \"" + port(p1) + "\"";
  for (const auto& view : std::vector<std::string>{"", "--writes", "--net"}) {
    std::vector<std::string> args = {"replay", log()};
    if (!view.empty()) args.insert(args.begin() + 1, view);
    const Outcome o = run_vigil(args, ws.path());
    ASSERT_EQ(o.exit_code, 0) << view << o.err;
    if (view != "--net") {
      EXPECT_NE(o.out.find("rule: " + deny_id), std::string::npos) << view << o.out;
    }
    if (view != "--writes") {
      EXPECT_NE(o.out.find(net_id), std::string::npos) << view << o.out;
    }
  }
  const Outcome j = run_vigil({"replay", "--json", "fs.write", log()}, ws.path());
  EXPECT_NE(j.out.find("\"rule_id\":\"" + deny_id + "\""), std::string::npos) << j.out;
  const Outcome h = run_vigil({"replay", "--html", conf / "r.html", log()}, ws.path());
  ASSERT_EQ(h.exit_code, 0) << h.err;
  const std::string html = read_file(conf / "r.html");
  EXPECT_NE(html.find("rule: " + deny_id), std::string::npos);
  EXPECT_NE(html.find("network.allowedDomains[0] &quot;" + port(p1) + "&quot;"), std::string::npos);
}

}  // namespace
}  // namespace vigil::test
