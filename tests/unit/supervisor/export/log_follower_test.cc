#include "supervisor/export/log_follower.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>

#include "supervisor/export/export_cursor.h"
#include "tests/unit/supervisor/export/export_test_logs.h"

namespace vigil {
namespace {

using export_test::test_key;

struct Sink {
  std::vector<ExportItem> items;
  std::size_t refuse_after = static_cast<std::size_t>(-1);
  LogFollower::Emit emit() {
    return [this](std::vector<ExportItem>& got) {
      if (items.size() >= refuse_after) return false;
      for (auto& i : got) items.push_back(i);
      return true;
    };
  }
  std::map<std::string, std::vector<std::uint64_t>> seqs() const {
    std::map<std::string, std::vector<std::uint64_t>> out;
    for (const auto& i : items)
      if (i.mark == ExportItem::Mark::kNone) out[i.session].push_back(i.seq);
    return out;
  }
};

FollowOptions options(const std::string& dir) {
  FollowOptions o;
  o.dir = dir;
  o.key = test_key();
  o.host = "h";
  return o;
}

std::vector<std::uint64_t> upto(std::uint64_t n) {
  std::vector<std::uint64_t> v;
  for (std::uint64_t i = 0; i < n; ++i) v.push_back(i);
  return v;
}

TEST(LogFollowerTest, EveryRecordOfEveryLogOnceAcrossARestartMidway) {
  export_test::TempDir d;
  ::chmod(d.path().c_str(), 0700);
  export_test::write_log(d.path() + "/a.jsonl", "a", 20);
  export_test::write_log(d.path() + "/b.jsonl", "b", 7);
  Sink first;
  first.refuse_after = 12;  // the exporter stops (spool full, or killed) part-way
  LogFollower f1(options(d.path()), {});
  ASSERT_TRUE(f1.poll(first.emit()).ok());
  const ExportCursor saved = f1.cursor();
  auto reparsed = parse_cursor(cursor_json(saved), "c");
  ASSERT_TRUE(reparsed.ok()) << reparsed.error().message;
  EXPECT_EQ(*reparsed, saved);

  export_test::write_log(d.path() + "/c.jsonl", "c", 3);
  Sink second;
  LogFollower f2(options(d.path()), *reparsed);
  ASSERT_TRUE(f2.poll(second.emit()).ok());
  auto all = first.seqs();
  for (const auto& [s, v] : second.seqs()) all[s].insert(all[s].end(), v.begin(), v.end());
  EXPECT_EQ(all["20261207T120000Z-a"], upto(22));
  EXPECT_EQ(all["20261207T120000Z-b"], upto(9));
  EXPECT_EQ(all["20261207T120000Z-c"], upto(5));
  for (const auto& i : second.items) EXPECT_TRUE(i.verified) << i.session << " " << i.seq;
  for (const auto& l : f2.cursor().logs) EXPECT_TRUE(l.done && l.chain.sealed) << l.name;
}

TEST(LogFollowerTest, AGrowingLogIsFollowedLineByLineAndATailWaits) {
  export_test::TempDir d;
  ::chmod(d.path().c_str(), 0700);
  export_test::write_log(d.path() + "/x.jsonl", "x", 4);
  const auto lines = export_test::lines_of(export_test::slurp(d.path() + "/x.jsonl"));
  const std::string path = d.path() + "/g.jsonl";
  auto append = [&](const std::string& bytes) {
    FILE* f = std::fopen(path.c_str(), "a");
    std::fputs(bytes.c_str(), f);
    std::fclose(f);
  };
  ::unlink((d.path() + "/x.jsonl").c_str());
  Sink s;
  LogFollower f(options(d.path()), {});
  append(lines[0] + "\n" + lines[1].substr(0, 10));
  ASSERT_TRUE(f.poll(s.emit()).ok());
  EXPECT_EQ(s.items.size(), 1u);
  append(lines[1].substr(10) + "\n" + lines[2] + "\n");
  ASSERT_TRUE(f.poll(s.emit()).ok());
  EXPECT_EQ(s.items.size(), 3u);
  for (std::size_t i = 3; i < lines.size(); ++i) append(lines[i] + "\n");
  ASSERT_TRUE(f.poll(s.emit()).ok());
  EXPECT_EQ(s.seqs()["20261207T120000Z-x"], upto(6));
  EXPECT_EQ(f.open_logs(), 0u);
}

TEST(LogFollowerTest, ATamperedLogIsMarkedBrokenNotSkipped) {
  export_test::TempDir d;
  ::chmod(d.path().c_str(), 0700);
  const std::string path = d.path() + "/t.jsonl";
  export_test::write_log(path, "t", 5);
  std::string text = export_test::slurp(path);
  text.replace(text.find("/w/f2"), 5, "/w/zz");
  FILE* f = std::fopen(path.c_str(), "w");
  std::fputs(text.c_str(), f);
  std::fclose(f);
  Sink s;
  LogFollower fl(options(d.path()), {});
  ASSERT_TRUE(fl.poll(s.emit()).ok());
  EXPECT_EQ(s.seqs()["20261207T120000Z-t"], upto(7));  // every record still goes out
  std::size_t marks = 0;
  for (const auto& i : s.items) {
    if (i.mark != ExportItem::Mark::kBroken) continue;
    ++marks;
    EXPECT_EQ(i.seq, 4u);
    EXPECT_NE(i.why.find("prev does not match"), std::string::npos) << i.why;
  }
  EXPECT_EQ(marks, 1u);
  for (const auto& i : s.items) {
    if (i.mark == ExportItem::Mark::kNone) {
      EXPECT_EQ(i.verified, i.seq < 4) << i.seq;
    }
  }
}

TEST(LogFollowerTest, RotatedAndPrunedLogs) {
  export_test::TempDir d;
  ::chmod(d.path().c_str(), 0700);
  export_test::write_log(d.path() + "/r.jsonl", "r", 10, false);  // still running
  export_test::write_log(d.path() + "/p.jsonl", "p", 10);
  Sink s;
  s.refuse_after = 4;
  LogFollower f(options(d.path()), {});
  ASSERT_TRUE(f.poll(s.emit()).ok());
  const ExportCursor stopped = f.cursor();
  // While followed: r is renamed (rotated) and p removed (pruned): both read to the end.
  ASSERT_EQ(::rename((d.path() + "/r.jsonl").c_str(), (d.path() + "/r.jsonl.1").c_str()), 0);
  ASSERT_EQ(::unlink((d.path() + "/p.jsonl").c_str()), 0);
  s.refuse_after = static_cast<std::size_t>(-1);
  ASSERT_TRUE(f.poll(s.emit()).ok());
  EXPECT_EQ(s.seqs()["20261207T120000Z-r"], upto(11));
  EXPECT_EQ(s.seqs()["20261207T120000Z-p"], upto(12));
  EXPECT_TRUE(f.cursor().logs.empty());

  // After a restart the removed log cannot be read: a lost mark says from where.
  Sink after;
  LogFollower g(options(d.path()), stopped);
  ASSERT_TRUE(g.poll(after.emit()).ok());
  std::size_t lost = 0;
  for (const auto& i : after.items) lost += i.mark == ExportItem::Mark::kLost;
  EXPECT_EQ(lost, stopped.logs.size() - 0u) << testing::PrintToString(after.items.size());
}

TEST(ExportCursorTest, WhatItDidNotWriteIsRefused) {
  for (const std::string bad :
       {"", "[]", "{\"version\":2,\"spool_acked\":0,\"logs\":[]}",
        "{\"version\":1,\"spool_acked\":-1,\"logs\":[]}",
        "{\"version\":1,\"spool_acked\":0,\"logs\":[{}]}",
        "{\"version\":1,\"spool_acked\":0,\"logs\":[],\"x\":1}"}) {
    SCOPED_TRACE(bad);
    auto c = parse_cursor(bad, "cursor.json");
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.error().message.find("remove it"), std::string::npos);
  }
  ExportCursor c;
  c.logs.push_back(FollowedLog{"a.jsonl", 1, 2, 3, {}, false});
  c.logs[0].chain.prev_hash = "nothex";
  EXPECT_FALSE(parse_cursor(cursor_json(c), "c").ok());
}

}  // namespace
}  // namespace vigil
