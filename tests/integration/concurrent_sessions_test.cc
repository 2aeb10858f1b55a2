// Twenty `vigil run` sessions at once, each with its own proxy and its own log: every
// session's log holds its own writes, its own network decisions and its own output, and
// nothing of any other session's.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

constexpr int kSessions = 20;

struct SessionResult {
  Outcome outcome;
  std::vector<nlohmann::json> records;
};

TEST(ConcurrentSessions, TwentySessionsNeverMixEvents) {
  TempDir outside, state;
  std::vector<std::unique_ptr<TempDir>> workspaces;
  std::vector<std::string> tags, logs;
  const std::string run_tag = std::to_string(::getpid());
  for (int i = 0; i < kSessions; ++i) {
    workspaces.push_back(std::make_unique<TempDir>());
    tags.push_back("s" + std::to_string(i) + "x" + run_tag);  // a valid host label
    logs.push_back(state / (tags.back() + ".jsonl"));
  }
  std::vector<SessionResult> results(kSessions);
  std::vector<std::thread> threads;
  for (int i = 0; i < kSessions; ++i) {
    threads.emplace_back([&, i] {
      // A denied write outside the workspace, an allowed one inside, a refused host (the
      // default policy allows none), and output naming the session.
      const std::string script = "echo out-" + tags[i] + "; echo x > '" + (outside / tags[i]) +
                                 "' 2>/dev/null; echo y > mine-" + tags[i] +
                                 "; curl -s -o /dev/null -w '%{http_code}\\n' -m 20 http://" +
                                 tags[i] + ".example/";
      results[i].outcome =
          run_vigil({"run", "--log", logs[i], "-c", script}, workspaces[i]->path(), 120);
    });
  }
  for (auto& t : threads) t.join();

  std::set<std::string> session_ids;
  for (int i = 0; i < kSessions; ++i) {
    SCOPED_TRACE("session " + tags[i]);
    const Outcome& o = results[i].outcome;
    ASSERT_EQ(o.exit_code, 0) << o.err;
    EXPECT_EQ(o.out, "out-" + tags[i] + "\n403\n");
    EXPECT_TRUE(exists(workspaces[i]->path() + "/mine-" + tags[i]));
    EXPECT_FALSE(exists(outside / tags[i]));
    // The model is told about this session's refusals only.
    EXPECT_NE(o.err.find(outside / tags[i]), std::string::npos) << o.err;
    EXPECT_NE(o.err.find(tags[i] + ".example:80"), std::string::npos) << o.err;

    const std::string text = read_file(logs[i]);
    size_t start = 0, nl;
    int denied_writes = 0, decisions = 0;
    std::string session_id;
    while ((nl = text.find('\n', start)) != std::string::npos) {
      const auto r = nlohmann::json::parse(text.substr(start, nl - start));
      start = nl + 1;
      if (session_id.empty()) session_id = r.at("session").get<std::string>();
      EXPECT_EQ(r.at("session"), session_id) << "one session id per log";
      const std::string line = r.dump();
      // No record names another session's tag.
      for (int j = 0; j < kSessions; ++j) {
        if (j != i) {
          EXPECT_EQ(line.find(tags[j]), std::string::npos) << line;
        }
      }
      if (r.at("kind") == "fs.write" && r.at("verdict") == "denied") {
        ++denied_writes;
        EXPECT_EQ(r.at("resolved"), outside / tags[i]);
      }
      if (r.at("kind") == "net.decision") {
        ++decisions;
        EXPECT_EQ(r.at("host"), tags[i] + ".example");
        EXPECT_EQ(r.at("verdict"), "denied");
      }
    }
    EXPECT_EQ(denied_writes, 1);
    EXPECT_EQ(decisions, 1);
    EXPECT_TRUE(session_ids.insert(session_id).second) << "session id reused: " << session_id;
    auto v = run_vigil({"replay", "--verify", logs[i]}, state.path());
    EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  }
}

}  // namespace
}  // namespace vigil::test
