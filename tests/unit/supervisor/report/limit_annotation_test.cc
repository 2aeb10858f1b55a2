// The <sandbox_violations> block says first which resource cap ended the command
// (events::LimitReached), escaped like every other part, and recomputes from the log.
#include <gtest/gtest.h>

#include <string>

#include "supervisor/report/annotation.h"

namespace vigil {
namespace {

TEST(LimitAnnotation, TheCapComesFirstAndEscaped) {
  ViolationCollector c;
  EXPECT_TRUE(c.empty());
  c.add(events::Body{events::LimitReached{"pids", "cap of 64\x1b[2J; raise it"}}, 1);
  EXPECT_FALSE(c.empty());
  const std::string block = render_annotation(c, AnnotationOptions{});
  EXPECT_EQ(block.rfind("<sandbox_violations>\nlimit pids: cap of 64", 0), 0u) << block;
  EXPECT_EQ(block.find('\x1b'), std::string::npos) << block;
  EXPECT_NE(block.find("</sandbox_violations>\n"), std::string::npos);
}

TEST(LimitAnnotation, NoCapNoLine) {
  ViolationCollector c;
  c.add(events::Body{events::LogTruncated{10}}, 1);
  EXPECT_EQ(render_annotation(c, AnnotationOptions{}), "");
}

}  // namespace
}  // namespace vigil
