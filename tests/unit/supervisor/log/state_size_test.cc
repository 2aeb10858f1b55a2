// The state's sizes and the capture stores' removal (issue 31, item 8), on a real
// directory tree.
#include "supervisor/log/state_size.h"

#include "supervisor/log/session_log.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

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

namespace vigil {
namespace {

// An agent session keeps one store per command (issue 32): they are its stores, counted
// against its cap together, read by undo and replay, and removed with its log; another
// session's stores, whose id only starts alike, are not.
TEST(StateSizeTest, AnAgentSessionsStoresGoTogether) {
  Dir d;
  ASSERT_FALSE(d.path.empty());
  const std::string root = d.path + "/vigil/captures";
  ASSERT_EQ(::mkdir((d.path + "/vigil").c_str(), 0700), 0);
  ASSERT_EQ(::mkdir(root.c_str(), 0700), 0);
  for (const char* n : {"S", "S-1", "S-12", "S-spare3", "S-x", "S1", "T-1"}) {
    ASSERT_EQ(::mkdir((root + "/" + n).c_str(), 0700), 0);
    put(root + "/" + n + "/f", 10);
  }
  EXPECT_EQ(capture_store_usage(root, "S-12").session, 40U) << "S, S-1, S-12 and the spare's";
  EXPECT_EQ(capture_store_usage(root, "S-12").all, 70U);
  auto dirs = capture_dirs_for("S", d.path.c_str(), "/nonexistent");
  ASSERT_TRUE(dirs) << dirs.error().message;
  EXPECT_EQ(*dirs, (std::vector<std::string>{root + "/S", root + "/S-1", root + "/S-12"}));
  ASSERT_TRUE(remove_capture_store(root, "S"));
  for (const char* gone : {"S", "S-1", "S-12", "S-spare3"})
    EXPECT_NE(::access((root + "/" + gone).c_str(), F_OK), 0) << gone;
  for (const char* kept : {"S-x", "S1", "T-1"})
    EXPECT_EQ(::access((root + "/" + kept).c_str(), F_OK), 0) << kept;
}

// Each command asks what the stores hold; a store unchanged since the last ask is not
// walked again, and one that changed is: a file kept or removed, a store made or removed,
// is counted at the next ask.
TEST(StateSizeTest, AStoreThatChangedIsCountedAgain) {
  Dir d;
  ASSERT_FALSE(d.path.empty());
  const std::string root = d.path + "/captures";
  ASSERT_EQ(::mkdir(root.c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((root + "/S-1").c_str(), 0700), 0);
  put(root + "/S-1/f", 10);
  // Settled: the store's mtime set 10 s back, so the size is kept after this walk.
  const timespec old[2] = {{::time(nullptr) - 10, 0}, {::time(nullptr) - 10, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, (root + "/S-1").c_str(), old, 0), 0);
  EXPECT_EQ(capture_store_usage(root, "S-2").session, 10U);
  EXPECT_EQ(capture_store_usage(root, "S-2").all, 10U);
  put(root + "/S-1/g", 20);  // a new file: the directory's mtime moves
  EXPECT_EQ(capture_store_usage(root, "S-2").session, 30U);
  ASSERT_EQ(::mkdir((root + "/S-2").c_str(), 0700), 0);
  put(root + "/S-2/h", 5);
  ASSERT_EQ(::mkdir((root + "/T").c_str(), 0700), 0);
  put(root + "/T/i", 7);
  const CaptureUsage u = capture_store_usage(root, "S-2");
  EXPECT_EQ(u.session, 35U);
  EXPECT_EQ(u.all, 42U);
  ASSERT_EQ(::unlink((root + "/S-1/f").c_str()), 0);
  EXPECT_EQ(capture_store_usage(root, "S-2").session, 25U);
  ASSERT_TRUE(remove_capture_store(root, "S"));
  EXPECT_EQ(capture_store_usage(root, "S-2").session, 0U);
  EXPECT_EQ(capture_store_usage(root, "S-2").all, 7U);
}

TEST(StateSizeTest, AStoreSizeIsKeptOnlyOnceItsDirectoryHasSettled) {
  constexpr std::int64_t s = 1'000'000'000;
  EXPECT_TRUE(store_memo_fresh(100 * s, 102 * s));
  EXPECT_TRUE(store_memo_fresh(100 * s, 200 * s));
  EXPECT_FALSE(store_memo_fresh(100 * s, 102 * s - 1)) << "within 2 s of a change";
  EXPECT_FALSE(store_memo_fresh(100 * s, 100 * s));
  EXPECT_FALSE(store_memo_fresh(100 * s, 99 * s)) << "a directory from the future";
}

TEST(StateSizeTest, StoreNamesOfASession) {
  EXPECT_EQ(store_name_order("S", "S"), 0);
  EXPECT_EQ(store_name_order("S-1", "S"), 2);
  EXPECT_EQ(store_name_order("S-10", "S"), 11);
  for (const char* other : {"S-", "S-01", "S-x", "S-1x", "S1", "T-1", "S-1234567890", "S-spare1"})
    EXPECT_EQ(store_name_order(other, "S"), -1) << other;
}

}  // namespace
}  // namespace vigil
