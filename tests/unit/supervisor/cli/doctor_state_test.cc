// `vigil doctor`'s account of the state vigil keeps (issue 38.6): a walk of a real
// directory, and the text from a table of facts.
#include "supervisor/cli/doctor_state.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace vigil {
namespace {

void put(const std::string& path, std::size_t bytes) {
  std::ofstream(path, std::ios::binary) << std::string(bytes, 'x');
}

TEST(DoctorStateTest, HumanBytes) {
  EXPECT_EQ(human_bytes(0), "0 B");
  EXPECT_EQ(human_bytes(1023), "1023 B");
  EXPECT_EQ(human_bytes(1536), "1.5 KiB");
  EXPECT_EQ(human_bytes(std::uint64_t{3} << 20), "3.0 MiB");
  EXPECT_EQ(human_bytes(std::uint64_t{5} << 30), "5.0 GiB");
}

TEST(DoctorStateTest, WalksTheStateDirectoryAndSaysHowToPruneEachPart) {
  char tmpl[] = "/tmp/vigil-doctor-state-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string base = tmpl;
  const std::string v = base + "/vigil";
  ASSERT_EQ(::mkdir(v.c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((v + "/sessions").c_str(), 0700), 0);
  put(v + "/sessions/a.jsonl", 1000);
  put(v + "/sessions/b.jsonl", 3000);
  put(v + "/sessions/notes.txt", 10);
  ASSERT_EQ(::mkdir((v + "/captures").c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((v + "/captures/s1").c_str(), 0700), 0);
  put(v + "/captures/s1/blob", 5000);
  // A link is counted as itself, never followed.
  ASSERT_EQ(::symlink("/usr", (v + "/captures/s1/link").c_str()), 0);
  put(v + "/log.key", 32);

  const StateFacts s = gather_state(base.c_str(), nullptr);
  EXPECT_EQ(s.dir, v);
  ASSERT_EQ(s.parts.size(), 4u);
  EXPECT_EQ(s.parts[0].name, "sessions");
  EXPECT_EQ(s.parts[0].items, 2u);  // the logs, not notes.txt
  EXPECT_EQ(s.parts[0].bytes, 4010u);
  EXPECT_EQ(s.parts[1].name, "captures");
  EXPECT_EQ(s.parts[1].items, 1u);
  EXPECT_GE(s.parts[1].bytes, 5000u);
  EXPECT_LT(s.parts[1].bytes, 5000u + 4096u + 64u) << "the link was followed";
  EXPECT_FALSE(s.parts[2].exists);  // no quarantine yet
  EXPECT_TRUE(s.parts[3].exists);
  EXPECT_EQ(s.parts[3].bytes, 32u);

  const std::string text = render_state(s);
  EXPECT_NE(text.find("state: " + v + " "), std::string::npos) << text;
  EXPECT_NE(text.find("  sessions    2 logs, 3.9 KiB"), std::string::npos) << text;
  EXPECT_NE(text.find("prune: vigil logs prune --older-than 30d"), std::string::npos) << text;
  EXPECT_NE(text.find("  quarantine  none yet"), std::string::npos) << text;
  EXPECT_NE(text.find("  log.key     32 B"), std::string::npos) << text;
  const auto j = state_json(s);
  EXPECT_EQ(j["parts"][0]["bytes"], 4010u);
  EXPECT_EQ(j["parts"][0]["prune"].get<std::string>().rfind("vigil logs prune", 0), 0u);
  EXPECT_EQ(std::system(("rm -rf '" + base + "'").c_str()), 0);
}

TEST(DoctorStateTest, NoPlaceForStateIsSaid) {
  const StateFacts s = gather_state(nullptr, nullptr);
  EXPECT_TRUE(s.dir.empty());
  EXPECT_NE(render_state(s).find("state: none kept here (neither XDG_STATE_HOME nor HOME"),
            std::string::npos);
}

}  // namespace
}  // namespace vigil
