// vigil.log.keep's choice of what goes (issue 19, item 5): only vigil's own log names,
// the oldest first, never the session that just ended.
#include "supervisor/log_retention.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace vigil
