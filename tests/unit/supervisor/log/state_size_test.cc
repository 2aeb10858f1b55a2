// The state's sizes and the capture stores' removal (issue 31, item 8), on a real
// directory tree.
#include "supervisor/log/state_size.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace vigil {
namespace {

struct Dir {
  std::string path;
  Dir() {
    std::string t = ::testing::TempDir() + "state-size-XXXXXX";
    path = ::mkdtemp(t.data()) != nullptr ? t : "";
  }
  ~Dir() { (void)std::system(("rm -rf '" + path + "'").c_str()); }
};

void put(const std::string& p, std::size_t n) { std::ofstream(p) << std::string(n, 'x'); }

TEST(StateSizeTest, SizesAndRemoval) {
  Dir d;
  ASSERT_FALSE(d.path.empty());
  const std::string state = d.path + "/vigil";
  for (const char* sub : {"", "/sessions", "/captures", "/captures/a", "/captures/b", "/quarantine"})
    ASSERT_EQ(::mkdir((state + sub).c_str(), 0700), 0);
  put(state + "/sessions/a.jsonl", 100);
  put(state + "/captures/a/f1", 1000);
  put(state + "/captures/a/pack.1", 500);
  put(state + "/captures/b/f2", 3000);
  ASSERT_EQ(::symlink("/etc", (state + "/captures/b/link").c_str()), 0);
  auto s = vigil_state_sizes(d.path.c_str(), "/nonexistent");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->logs.bytes, 100U);
  EXPECT_EQ(s->captures.bytes, 4500U) << "a symlink is not followed";
  EXPECT_EQ(s->captures.entries, 2U);
  EXPECT_EQ(s->quarantine.bytes, 0U);
  EXPECT_EQ(s->total(), 4600U);
  const CaptureUsage u = capture_store_usage(state + "/captures", "a");
  EXPECT_EQ(u.session, 1500U);
  EXPECT_EQ(u.all, 4500U);
  ASSERT_TRUE(remove_capture_store(state + "/captures", "a"));
  struct stat st {};
  EXPECT_NE(::lstat((state + "/captures/a").c_str(), &st), 0);
  EXPECT_TRUE(remove_capture_store(state + "/captures", "a")) << "gone already: no error";
  EXPECT_FALSE(remove_capture_store(state + "/captures", "../sessions"));
  EXPECT_EQ(::lstat((state + "/sessions/a.jsonl").c_str(), &st), 0);
}

}  // namespace
}  // namespace vigil
