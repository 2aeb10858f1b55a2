// The command's trust for a terminating proxy (tls_helper.h): the bundle copies only the
// CERTIFICATE blocks of an extra file (a key in a combined PEM never reaches the
// sandbox), skips a missing one, ends with the session CA; and the variables clients read.
#include "supervisor/command/tls_helper.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

namespace vigil {
namespace {

TEST(TlsHelperTest, TheBundleTakesOnlyCertificatesAndEndsWithTheSessionCa) {
  char dir[] = "/tmp/vigil-tls-helper-test.XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string extra = std::string(dir) + "/combined.pem";
  std::ofstream(extra) << "-----BEGIN PRIVATE KEY-----\nSECRETKEY\n-----END PRIVATE KEY-----\n"
                          "-----BEGIN CERTIFICATE-----\nEXTRACERT\n-----END CERTIFICATE-----\n";
  const std::string ca = "-----BEGIN CERTIFICATE-----\nSESSIONCA\n-----END CERTIFICATE-----\n";
  const std::string bundle = trust_bundle(ca, {extra, std::string(dir) + "/missing.pem"});
  EXPECT_EQ(bundle.find("SECRETKEY"), std::string::npos);
  EXPECT_EQ(bundle.find("PRIVATE KEY"), std::string::npos);
  EXPECT_NE(bundle.find("EXTRACERT"), std::string::npos);
  EXPECT_TRUE(bundle.ends_with(ca));
  std::remove(extra.c_str());
  ::rmdir(dir);
  const auto env = trust_environment("/s/b.pem");
  ASSERT_EQ(env.size(), 5u);
  for (const char* name : {"SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE",
                           "CURL_CA_BUNDLE", "GIT_SSL_CAINFO"}) {
    bool found = false;
    for (const auto& [k, v] : env) found = found || (k == name && v == "/s/b.pem");
    EXPECT_TRUE(found) << name;
  }
}

TEST(TlsHelperTest, OnlyTerminationKeysStartTheHelper) {
  NetworkPolicy net;
  EXPECT_FALSE(needs_tls_helper(net, false));
  EXPECT_TRUE(needs_tls_helper(net, true));
  net.tls_terminate.enabled = true;
  EXPECT_TRUE(needs_tls_helper(net, false));
  net.tls_terminate.enabled = false;
  net.request_rules.push_back({"a.example.com", {"GET"}, {}, "r"});
  EXPECT_TRUE(needs_tls_helper(net, false));
}

}  // namespace
}  // namespace vigil
