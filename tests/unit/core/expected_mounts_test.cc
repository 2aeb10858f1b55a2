// The supervisor -> vigil-init list of planned writable mounts: round trips for any path
// bytes, and every malformed input is an error, never a partial list.
#include "supervisor/core/expected_mounts.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

TEST(ExpectedMounts, RoundTripsOddPaths) {
  const std::vector<ExpectedMount> in = {
      {"/w", 2049, 131073},
      {"/w/with space/and\nnewline", 0, 0},
      {"/w/\xff\xfe-not-utf8", UINT64_MAX, 1},
  };
  const auto wire = encode_expected_mounts(in);
  auto out = decode_expected_mounts(wire);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(*out, in);
  auto empty = decode_expected_mounts("");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(ExpectedMounts, RefusesMalformedInput) {
  using namespace std::string_literals;
  const std::string bad[] = {
      "/w\0"s + "1\0"s,                              // truncated record
      "/w\0"s + "1\0"s + "2"s,                       // last field unterminated
      "w\0"s + "1\0"s + "2\0"s,                      // relative path
      "\0"s + "1\0"s + "2\0"s,                       // empty path
      "/w\0"s + "-1\0"s + "2\0"s,                    // not plain decimal
      "/w\0"s + "1x\0"s + "2\0"s,                    // trailing junk
      "/w\0"s + "\0"s + "2\0"s,                      // empty number
      "/w\0"s + "18446744073709551616\0"s + "2\0"s,  // overflows 64 bits
      "/w\0"s + "01\0"s + "2\0"s,                    // a leading zero: a second spelling
      "/w\0"s + "1\0"s + "+2\0"s,                    // a sign
  };
  for (const auto& b : bad) EXPECT_FALSE(decode_expected_mounts(b).ok()) << b.size();
}

}  // namespace
}  // namespace vigil
