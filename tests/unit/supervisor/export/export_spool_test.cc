#include "supervisor/export/export_spool.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/unit/common/scratch_dir.h"

namespace vigil {
namespace {

using testing_scratch::Scratch;

std::string frame(std::size_t body) { return std::to_string(body) + " " + std::string(body, 'x'); }

TEST(ExportSpoolTest, TheCapCountsWhatIsInTheFileEvenWhenNothingIsPending) {
  Scratch d;
  auto s = Spool::open(d / "spool", 100, 0);
  ASSERT_TRUE(s.ok()) << s.error().message;
  // An empty spool has room for what fits, and no more: the caller decides whether one
  // message bigger than the cap may go through alone.
  EXPECT_TRUE(s->has_room(100));
  EXPECT_FALSE(s->has_room(101));
  ASSERT_TRUE(s->append(frame(60)).ok());
  EXPECT_EQ(s->pending(), 63u);
  EXPECT_TRUE(s->has_room(37));
  EXPECT_FALSE(s->has_room(38));
  // Taken but not all: the file keeps its size until everything in it was taken.
  ASSERT_TRUE(s->ack(20).ok());
  EXPECT_EQ(s->pending(), 43u);
  EXPECT_FALSE(s->has_room(38));
  ASSERT_TRUE(s->ack(63).ok());
  EXPECT_EQ(s->pending(), 0u);
  EXPECT_TRUE(s->has_room(100));
}

TEST(ExportSpoolTest, ATornLastFrameIsCutOffWhenOpenedAgain) {
  Scratch d;
  {
    auto s = Spool::open(d / "spool", 1000, 0);
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE(s->append(frame(10) + frame(5) + "9 abc").ok());
  }
  auto again = Spool::open(d / "spool", 1000, 0);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->pending(), 13u + 7u);
  auto r = again->read(0, 1000);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, frame(10) + frame(5));
}

}  // namespace
}  // namespace vigil
