// The one base64 (supervisor/core/base/base64.h): RFC 4648's vectors, appending in place
// after what the buffer holds, and only the canonical encoding decoded.
#include "supervisor/core/base/base64.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace vigil {
namespace {

TEST(Base64, EncodesTheRfcVectors) {
  const std::pair<const char*, const char*> vectors[] = {{"", ""},
                                                         {"f", "Zg=="},
                                                         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},
                                                         {"foob", "Zm9vYg=="},
                                                         {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [in, out] : vectors) {
    EXPECT_EQ(base64_encode(in), out) << in;
    EXPECT_EQ(base64_decode(out), std::string(in)) << out;
  }
}

TEST(Base64, AppendsAfterWhatTheBufferHolds) {
  std::string out = "{\"b64\":\"";
  base64_append(out, std::string("\xff\x00\x80", 3));
  base64_append(out, "");
  EXPECT_EQ(out, "{\"b64\":\"/wCA");
}

TEST(Base64, RoundTripsEveryByteAtEveryLength) {
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  for (std::size_t n = 0; n <= all.size(); n += 1) {
    const std::string in = all.substr(all.size() - n);
    EXPECT_EQ(base64_decode(base64_encode(in)), in) << n;
  }
}

TEST(Base64, DecodesOnlyTheCanonicalForm) {
  for (const char* bad : {"Zg", "Zg=", "Zh==", "Zm9=", "Z===", "====", "Zg==Zg==", "Zm 9v",
                          "Zm9v\n", "Zm-_", "Zm9v="}) {
    EXPECT_FALSE(base64_decode(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace vigil
