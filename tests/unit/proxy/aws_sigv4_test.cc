// AWS SigV4 (aws_sigv4.h) against AWS's own published example (the IAM ListUsers request
// of the "Signature Version 4 signing process" documentation): its canonical request
// hash and its signature, recomputed here from the parts.
#if VIGIL_HAVE_TLS_HELPER
#include "proxy/aws_sigv4.h"

#include <gtest/gtest.h>

namespace vigil::proxy::sigv4 {
namespace {

const Request kListUsers{
    "GET",
    "/?Version=2010-05-08&Action=ListUsers",
    {{"Host", "iam.amazonaws.com"},
     {"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"},
     {"X-Amz-Date", "20150830T123600Z"}},
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"};

TEST(AwsSigv4Test, AwsPublishedExampleSignsAlike) {
  auto a = parse_authorization(
      "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, "
      "SignedHeaders=content-type;host;x-amz-date, "
      "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->access_key_id, "AKIDEXAMPLE");
  EXPECT_EQ(a->region, "us-east-1");
  EXPECT_EQ(a->service, "iam");
  EXPECT_EQ(a->signed_headers, (std::vector<std::string>{"content-type", "host", "x-amz-date"}));
  EXPECT_EQ(sha256_hex(""), kListUsers.payload_hash);
  EXPECT_EQ(sha256_hex(canonical_request(kListUsers, a->signed_headers)),
            "f536975d06c0309214f805bb90ccff089219ecd68b2577efef23edd43b7e1a59");
  EXPECT_EQ(signature(kListUsers, *a, "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                      "20150830T123600Z"),
            a->signature);
  EXPECT_EQ(authorization_value(*a, "AKIDEXAMPLE", a->signature),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, "
            "SignedHeaders=content-type;host;x-amz-date, "
            "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7");
  // Another secret: another signature (the signer uses the key it is given).
  EXPECT_NE(signature(kListUsers, *a, "fake_value_x", "20150830T123600Z"), a->signature);
}

TEST(AwsSigv4Test, OtherAuthorizationsAreNotParsed) {
  EXPECT_FALSE(parse_authorization("Bearer x"));
  EXPECT_FALSE(parse_authorization("AWS4-HMAC-SHA256 Credential=A/B, SignedHeaders=host, Signature=x"));
  EXPECT_FALSE(parse_authorization("AWS4-ECDSA-P256-SHA256 Credential=A/d/r/s/aws4_request"));
}

}  // namespace
}  // namespace vigil::proxy::sigv4
#endif
