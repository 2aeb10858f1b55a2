// The chunked-body scanner: where a chunked body ends, fed at once and in pieces, and
// every malformed shape that two parsers could split differently refused.
#include "proxy/chunked.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vigil::proxy::http {
namespace {

struct Row {
  std::string in;
  bool done;
  bool error;
  std::size_t consumed;  // when done: the body's length
};

TEST(Chunked, Table) {
  const std::vector<Row> rows = {
      {"0\r\n\r\n", true, false, 5},
      {"0\r\n\r\nGET", true, false, 5},
      {"5\r\nhello\r\n0\r\n\r\n", true, false, 15},
      {"5;name=value\r\nhello\r\n0\r\n\r\n", true, false, 26},
      {"5 ;x\r\nhello\r\n0\r\n\r\n", true, false, 18},  // BWS before ';'
      {"A\r\n0123456789\r\n0\r\n\r\n", true, false, 20},
      {"a\r\n0123456789\r\n0\r\n\r\n", true, false, 20},
      {"0005\r\nhello\r\n0\r\n\r\n", true, false, 18},
      {"0\r\nExpires: never\r\nX: y\r\n\r\n", true, false, 27},  // trailers
      {"5\r\nhel", false, false, 6},
      {"5\r\nhello\r\n", false, false, 10},
      {"0\r\n", false, false, 3},
      {"0\r\n\r", false, false, 4},
      // errors
      {"\r\n", false, true, 0},  // no size
      {"x\r\n", false, true, 0},
      {"0x5\r\nhello\r\n0\r\n\r\n", false, true, 0},  // prefix
      {"+5\r\nhello\r\n", false, true, 0},
      {" 5\r\nhello\r\n", false, true, 0},              // leading space
      {"5\nhello\r\n0\r\n\r\n", false, true, 0},        // bare LF after size
      {"5\r\nhello\n0\r\n\r\n", false, true, 0},        // bare LF after data
      {"5\r\nhelloX\r\n", false, true, 0},              // data longer than size
      {"0\r\n\n", false, true, 0},                      // bare LF at the end
      {"0\r\nX: y\n\r\n", false, true, 0},              // bare LF in trailer
      {"0\r\n y\r\n\r\n", false, true, 0},              // trailer starting with space
      {"5;a\x01\r\nhello\r\n", false, true, 0},         // control byte in extension
      {"10000000000000000\r\n", false, true, 0},        // 17 hex digits: overflow
      {std::string(40, '0') + "\r\n", false, true, 0},  // too many digits
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.in);
    ChunkedScanner whole;
    const auto s = whole.feed(r.in);
    EXPECT_EQ(s.done, r.done);
    EXPECT_EQ(s.error, r.error) << s.message;
    if (!r.error) {
      EXPECT_EQ(s.consumed, r.consumed);
    }

    // Byte by byte: same verdict, same length.
    ChunkedScanner bytes;
    std::size_t consumed = 0;
    bool done = false;
    bool error = false;
    for (std::size_t i = 0; i < r.in.size() && !done && !error; ++i) {
      const auto b = bytes.feed(std::string_view(r.in).substr(i, 1));
      consumed += b.consumed;
      done = b.done;
      error = b.error;
    }
    EXPECT_EQ(done, r.done);
    EXPECT_EQ(error, r.error);
    if (!r.error) {
      EXPECT_EQ(consumed, r.consumed);
    }
  }
}

TEST(Chunked, LongExtensionAndTrailerAreBounded) {
  ChunkedScanner a;
  EXPECT_TRUE(a.feed("5;" + std::string(ChunkedScanner::kMaxExtensionBytes + 1, 'x')).error);
  ChunkedScanner b;
  EXPECT_TRUE(b.feed("0\r\nX: " + std::string(ChunkedScanner::kMaxTrailerBytes + 1, 'y')).error);
}

TEST(Chunked, LargeChunkStreams) {
  ChunkedScanner s;
  auto r = s.feed("ffffffff\r\n");
  EXPECT_FALSE(r.done);
  EXPECT_EQ(r.consumed, 10u);
  const std::string block(1 << 16, 'z');
  std::uint64_t total = 0;
  while (total < 0xffffffffull) {
    const std::size_t n =
        static_cast<std::size_t>(std::min<std::uint64_t>(block.size(), 0xffffffffull - total));
    r = s.feed(std::string_view(block).substr(0, n));
    ASSERT_EQ(r.consumed, n);
    total += n;
    if (total > (1ull << 24)) break;  // enough to show it streams without buffering
  }
  EXPECT_FALSE(s.done());
  EXPECT_FALSE(s.failed());
}

}  // namespace
}  // namespace vigil::proxy::http
