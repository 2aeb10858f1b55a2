#include "supervisor/export/record_chain.h"

#include <gtest/gtest.h>

#include "supervisor/log/log_stream.h"
#include "tests/unit/supervisor/export/export_test_logs.h"

namespace vigil {
namespace {

using export_test::lines_of;
using export_test::test_key;

TEST(RecordChainTest, AnIntactKeyedLogVerifiesLineByLineAndIsSealed) {
  export_test::TempDir d;
  export_test::write_log(d.path() + "/a.jsonl", "a1", 5);
  const auto lines = lines_of(export_test::slurp(d.path() + "/a.jsonl"));
  ASSERT_EQ(lines.size(), 7u);
  ChainState s;
  for (const auto& l : lines) {
    const ChainStep step = chain_step(s, l, test_key());
    EXPECT_TRUE(step.verified) << step.broke;
    EXPECT_TRUE(step.broke.empty());
  }
  EXPECT_TRUE(s.ended);
  EXPECT_TRUE(s.sealed);
  EXPECT_EQ(s.next_seq, 7u);
  EXPECT_EQ(s.session, "20261207T120000Z-a1");
}

TEST(RecordChainTest, TheStateCarriesAcrossARestart) {
  export_test::TempDir d;
  export_test::write_log(d.path() + "/a.jsonl", "a1", 5);
  const auto lines = lines_of(export_test::slurp(d.path() + "/a.jsonl"));
  ChainState whole, first;
  for (const auto& l : lines) chain_step(whole, l, test_key());
  for (std::size_t i = 0; i < 3; ++i) chain_step(first, lines[i], test_key());
  ChainState resumed = first;  // as the cursor keeps it
  for (std::size_t i = 3; i < lines.size(); ++i) chain_step(resumed, lines[i], test_key());
  EXPECT_EQ(resumed, whole);
}

TEST(RecordChainTest, EachKindOfTamperingBreaksTheChainWhereItIs) {
  export_test::TempDir d;
  export_test::write_log(d.path() + "/a.jsonl", "a1", 5);
  const auto lines = lines_of(export_test::slurp(d.path() + "/a.jsonl"));
  struct Case {
    const char* name;
    std::vector<std::string> lines;
    std::size_t breaks_at;
    const char* says;
  };
  auto edited = lines;
  edited[2].replace(edited[2].find("/w/f1"), 5, "/w/g1");
  auto dropped = lines;
  dropped.erase(dropped.begin() + 3);
  auto swapped = lines;
  std::swap(swapped[2], swapped[3]);
  auto unsealed = lines;
  unsealed.pop_back();
  auto end = events::parse_log_record(lines.back());
  ASSERT_TRUE(end.ok());
  std::get<events::SessionEnd>(end->body).mac = std::string(64, '0');
  unsealed.push_back(events::serialize(*end));
  const Case cases[] = {
      {"an edited record", edited, 3, "prev does not match"},
      {"a deleted record", dropped, 3, "is missing"},
      {"two records swapped", swapped, 2, "is missing"},
      {"a forged end", unsealed, 6, "does not match its seal"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    ChainState s;
    std::optional<std::size_t> at;
    std::string why;
    for (std::size_t i = 0; i < c.lines.size(); ++i) {
      const auto step = chain_step(s, c.lines[i], test_key());
      if (!step.broke.empty() && !at) {
        at = i;
        why = step.broke;
      }
      if (at) {
        EXPECT_FALSE(step.verified);
      }
    }
    ASSERT_TRUE(at.has_value());
    EXPECT_EQ(*at, c.breaks_at);
    EXPECT_NE(why.find(c.says), std::string::npos) << why;
    // The whole-file verifier agrees that it is broken.
    std::string text;
    for (const auto& l : c.lines) text += l + "\n";
    EXPECT_FALSE(verify_log_text(text, test_key()).ok);
  }
}

TEST(RecordChainTest, WithoutTheKeyASealIsUncheckedNotBroken) {
  export_test::TempDir d;
  export_test::write_log(d.path() + "/a.jsonl", "a1", 1);
  ChainState s;
  for (const auto& l : lines_of(export_test::slurp(d.path() + "/a.jsonl")))
    EXPECT_TRUE(chain_step(s, l, std::nullopt).verified);
  EXPECT_TRUE(s.ended);
  EXPECT_FALSE(s.sealed);
}

}  // namespace
}  // namespace vigil
