// Log retention's choices (issue 19, item 5): vigil.log.keep's (only vigil's own log
// names, the oldest first, never the session that just ended), `vigil logs prune
// --older-than`'s duration and its selection by last write, and the log directory check
// both share with the session log's own directory.
#include "supervisor/log/log_retention.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <optional>

#include "supervisor/log/session_log.h"

namespace vigil {
namespace {

TEST(LogRetention, OnlyVigilsLogNamesCount) {
  EXPECT_TRUE(is_session_log_name("20250131T120501Z-3f9c2a1b7d4e.jsonl"));
  for (const char* n : {"20250131T120501Z-3f9c2a1b7d4e.json", "notes.jsonl", "x.jsonl",
                        "20250131X120501Z-3f9c2a1b7d4e.jsonl", "20250131T120501Z-.jsonl",
                        "20250131T120501Z-3F9C.jsonl", "20250131T120501Z_3f9c.jsonl",
                        "2025013lT120501Z-3f9c.jsonl", ".jsonl", ""}) {
    EXPECT_FALSE(is_session_log_name(n)) << n;
  }
}

TEST(LogRetention, TheOldestGoTheCurrentOneStays) {
  const std::vector<std::string> names = {"20250103T000000Z-cc.jsonl", "20250101T000000Z-aa.jsonl",
                                          "mine.jsonl", "20250102T000000Z-bb.jsonl",
                                          "20250104T000000Z-dd.jsonl"};
  EXPECT_EQ(logs_to_prune(names, 2, "20250104T000000Z-dd.jsonl"),
            (std::vector<std::string>{"20250102T000000Z-bb.jsonl", "20250101T000000Z-aa.jsonl"}));
  EXPECT_EQ(logs_to_prune(names, 10, "20250104T000000Z-dd.jsonl"), std::vector<std::string>{});
  // The current log is one of the kept whatever its name sorts as (same-second starts).
  EXPECT_EQ(logs_to_prune(names, 1, "20250101T000000Z-aa.jsonl"),
            (std::vector<std::string>{"20250104T000000Z-dd.jsonl", "20250103T000000Z-cc.jsonl",
                                      "20250102T000000Z-bb.jsonl"}));
  EXPECT_EQ(logs_to_prune(names, 2, "20250101T000000Z-aa.jsonl"),
            (std::vector<std::string>{"20250103T000000Z-cc.jsonl", "20250102T000000Z-bb.jsonl"}));
}

TEST(LogRetention, AgeTakesAWholeNumberAndOneUnit) {
  struct Case {
    const char* text;
    std::optional<std::uint64_t> seconds;  // none: refused
  };
  const Case cases[] = {
      {"45s", 45},
      {"30m", 1800},
      {"12h", 43200},
      {"7d", 604800},
      {"2w", 1209600},
      {"007d", 604800},
      {"1d", 86400},
      {"999999999999s", 999999999999ULL},
      {"", std::nullopt},
      {"7", std::nullopt},   // no unit: minutes or days?
      {"d", std::nullopt},   // no number
      {"0d", std::nullopt},  // would remove the log being written
      {"-1d", std::nullopt},
      {"+1d", std::nullopt},
      {"1.5d", std::nullopt},
      {"7D", std::nullopt},
      {"7days", std::nullopt},
      {"7 d", std::nullopt},
      {" 7d", std::nullopt},
      {"1y", std::nullopt},
      {"1h30m", std::nullopt},
      {"9999999999999d", std::nullopt},  // more digits than any sane age
      {"999999999999w", 999999999999ULL * 604800},
  };
  for (const Case& c : cases) {
    const auto got = parse_log_age(c.text);
    if (c.seconds) {
      ASSERT_TRUE(got) << c.text << ": " << got.error().message;
      EXPECT_EQ(*got, *c.seconds) << c.text;
    } else {
      ASSERT_FALSE(got) << c.text;
      EXPECT_NE(got.error().message.find("e.g. 7d or 12h"), std::string::npos)
          << got.error().message;
    }
  }
}

TEST(LogRetention, OlderThanGoesByLastWriteOldestFirst) {
  constexpr std::int64_t kNow = 1'800'000'000;
  constexpr std::uint64_t kDay = 86400;
  struct Case {
    const char* what;
    std::vector<LogEntry> entries;
    std::uint64_t age;
    std::vector<std::string> want;
  };
  const Case cases[] = {
      {"older than 7d, oldest first",
       {{"20250105T000000Z-ee.jsonl", kNow - 8 * kDay},
        {"20250101T000000Z-aa.jsonl", kNow - 30 * kDay},
        {"20250102T000000Z-bb.jsonl", kNow - 1 * kDay}},
       7 * kDay,
       {"20250101T000000Z-aa.jsonl", "20250105T000000Z-ee.jsonl"}},
      {"started long ago but written within the age: a live session's log stays",
       {{"20200101T000000Z-aa.jsonl", kNow - 60}},
       kDay,
       {}},
      {"exactly the age is not older than it",
       {{"20250101T000000Z-aa.jsonl", kNow - static_cast<std::int64_t>(kDay)},
        {"20250101T000000Z-bb.jsonl", kNow - static_cast<std::int64_t>(kDay) - 1}},
       kDay,
       {"20250101T000000Z-bb.jsonl"}},
      {"a future time (clock moved back) is not old",
       {{"20250101T000000Z-aa.jsonl", kNow + 3600}},
       1,
       {}},
      {"only *.jsonl files (a --log file may have any name; its first record says more)",
       {{"run1.jsonl", kNow - 100 * kDay},
        {"20250101T000000Z-aa.jsonl.bak", kNow - 100 * kDay},
        {"notes.txt", kNow - 100 * kDay},
        {".jsonl", kNow - 100 * kDay},
        {".hidden.jsonl", kNow - 100 * kDay},
        {"20250101T000000Z-aa.jsonl", kNow - 99 * kDay}},
       kDay,
       {"run1.jsonl", "20250101T000000Z-aa.jsonl"}},
      {"same time: by name",
       {{"20250101T000000Z-bb.jsonl", kNow - 9 * kDay},
        {"20250101T000000Z-aa.jsonl", kNow - 9 * kDay}},
       kDay,
       {"20250101T000000Z-aa.jsonl", "20250101T000000Z-bb.jsonl"}},
  };
  for (const Case& c : cases) {
    std::vector<std::string> got;
    for (const auto& e : logs_older_than(c.entries, kNow, c.age)) got.push_back(e.name);
    EXPECT_EQ(got, c.want) << c.what;
  }
}

TEST(LogRetention, TheLogDirectoryMustBeARealOneOnlyWeWrite) {
  struct Case {
    const char* what;
    mode_t mode;
    uid_t owner;
    const char* refused;  // nullptr: accepted
  };
  const Case cases[] = {
      {"private", S_IFDIR | 0700, 1000, nullptr},
      {"readable by others", S_IFDIR | 0755, 1000, nullptr},
      {"someone else's", S_IFDIR | 0700, 1001, "is owned by uid 1001"},
      {"group-writable", S_IFDIR | 0770, 1000, "writable by other users (mode 0770)"},
      {"world-writable, sticky (/tmp)", S_IFDIR | 01777, 1000, "(mode 1777)"},
      {"a symlink", S_IFLNK | 0777, 1000, "not a directory (a symlink?)"},
      {"a file", S_IFREG | 0600, 1000, "not a directory"},
  };
  for (const Case& c : cases) {
    struct stat st {};
    st.st_mode = c.mode;
    st.st_uid = c.owner;
    const auto r = judge_log_dir("/d", st, 1000, "prune it");
    if (c.refused == nullptr) {
      EXPECT_TRUE(r) << c.what << ": " << r.error().message;
      continue;
    }
    ASSERT_FALSE(r) << c.what;
    EXPECT_NE(r.error().message.find(c.refused), std::string::npos) << r.error().message;
    EXPECT_TRUE(r.error().message.starts_with("/d ")) << r.error().message;
    EXPECT_NE(r.error().message.find("refusing to prune it"), std::string::npos)
        << r.error().message;
  }
}

}  // namespace
}  // namespace vigil
