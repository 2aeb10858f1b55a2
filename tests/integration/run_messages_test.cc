// What `vigil run` and `vigil explain` say about themselves (issue 19, items 5 and 8): the
// log's place after a denial or with -v (and nothing new on a clean run), the network
// policy in explain, bwrap's argument limit by name, and vigil.log.keep.
#include <dirent.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n != "." && n != "..") out.push_back(n);
    }
    ::closedir(d);
  }
  return out;
}

// The last line of `text` (without its newline).
std::string last_line(const std::string& text) {
  std::string t = text;
  while (!t.empty() && t.back() == '\n') t.pop_back();
  return t.substr(t.rfind('\n') + 1);
}

TEST(RunMessages, TheLogsPlaceEndsStderrAfterADenialOrWithVerbose) {
  TempDir ws;
  const Outcome clean = run_vigil({"run", "--", "true"}, ws.path());
  EXPECT_EQ(clean.exit_code, 0) << clean.err;
  EXPECT_EQ(clean.err.find("session log:"), std::string::npos) << clean.err;

  const Outcome verbose = run_vigil({"run", "-v", "--", "true"}, ws.path());
  EXPECT_EQ(verbose.exit_code, 0) << verbose.err;
  const std::string line = last_line(verbose.err);
  ASSERT_EQ(line.rfind("vigil: session log: /", 0), 0U) << verbose.err;
  EXPECT_TRUE(exists(line.substr(std::string("vigil: session log: ").size()))) << line;

  const Outcome denied =
      run_vigil({"run", "--", "sh", "-c", "touch /etc/vigil-msg-x 2>/dev/null; true"}, ws.path());
  EXPECT_EQ(denied.exit_code, 0) << denied.err;
  const std::size_t block = denied.err.find("</sandbox_violations>");
  const std::size_t at = denied.err.find("vigil: session log: /");
  ASSERT_NE(block, std::string::npos) << denied.err;
  ASSERT_NE(at, std::string::npos) << denied.err;
  EXPECT_LT(block, at) << "the line closes stderr, after the block";
  EXPECT_EQ(last_line(denied.err).rfind("vigil: session log: ", 0), 0U) << denied.err;
}

TEST(RunMessages, ExplainSaysTheNetworkPolicy) {
  TempDir ws, cfg;
  const Outcome none = run_vigil({"explain"}, ws.path());
  EXPECT_EQ(none.exit_code, 0) << none.err;
  EXPECT_NE(none.out.find("# network: allowed hosts: none, every host is refused (list hosts in "
                          "network.allowedDomains)"),
            std::string::npos)
      << none.out;
  EXPECT_NE(none.out.find("NO_PROXY=localhost,127.0.0.1,::1"), std::string::npos) << none.out;
  write_file(cfg / "s.json", R"({"network":{"allowedDomains":["example.test","*.pkg.test"],)"
                             R"("deniedDomains":["bad.pkg.test"]}})");
  const Outcome some = run_vigil({"explain", "--settings", cfg / "s.json"}, ws.path());
  EXPECT_EQ(some.exit_code, 0) << some.err;
  EXPECT_NE(some.out.find("# network: allowed hosts (network.allowedDomains): example.test, "
                          "*.pkg.test"),
            std::string::npos)
      << some.out;
  EXPECT_NE(some.out.find("(network.deniedDomains): bad.pkg.test"), std::string::npos) << some.out;
}

TEST(RunMessages, TooManyArgumentsNameBwrapsLimit) {
  TempDir ws;
  std::vector<std::string> args = {"run", "--", "true"};
  for (int i = 0; i < 9000; ++i) args.push_back("a");
  const Outcome o = run_vigil(args, ws.path());
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("bwrap accepts at most 9000"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("xargs"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("vigil probe"), std::string::npos) << o.err;
  // Well under the limit, the same command runs.
  args.resize(3 + 8000);
  EXPECT_EQ(run_vigil(args, ws.path()).exit_code, 0);
}

TEST(RunMessages, LogKeepPrunesTheDefaultDirectoryOnly) {
  TempDir ws, cfg, state, elsewhere;
  write_file(cfg / "s.json", R"({"filesystem":{"allowWrite":["."]},"vigil":{"log":{"keep":2}}})");
  const std::map<std::string, std::string> env = {{"XDG_STATE_HOME", state.path()}};
  make_dirs(state / "vigil/sessions");
  write_file(state / "vigil/sessions/notes.jsonl", "mine\n");
  const std::string given = elsewhere / "20000101T000000Z-ab.jsonl";
  ASSERT_EQ(run_vigil({"run", "--log", given, "--", "true"}, ws.path(), 60, env).exit_code, 0);
  for (int i = 0; i < 4; ++i) {
    const Outcome o =
        run_vigil({"run", "--settings", cfg / "s.json", "--", "true"}, ws.path(), 60, env);
    ASSERT_EQ(o.exit_code, 0) << o.err;
  }
  std::size_t logs = 0;
  for (const auto& n : names_in(state / "vigil/sessions")) logs += n.ends_with(".jsonl");
  EXPECT_EQ(logs, 3U) << "two session logs and the file vigil did not name";
  EXPECT_EQ(read_file(state / "vigil/sessions/notes.jsonl"), "mine\n");
  EXPECT_TRUE(exists(given));
  // The newest two are the ones kept: each verifies.
  for (const auto& n : names_in(state / "vigil/sessions")) {
    if (n == "notes.jsonl" || !n.ends_with(".jsonl")) continue;
    const Outcome v =
        run_vigil({"replay", "--verify", state / ("vigil/sessions/" + n)}, ws.path(), 60, env);
    EXPECT_EQ(v.exit_code, 0) << n << v.out << v.err;
  }
}

}  // namespace
}  // namespace vigil::test
