#include "supervisor/export/syslog_client.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

TEST(SyslogClientTest, UrlsParseToTargets) {
  auto t = parse_syslog_url("syslog://127.0.0.1:514");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t, (SyslogTarget{"127.0.0.1", 514, false, ""}));
  auto s = parse_syslog_url("syslog+tls://collector.example:6514");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, (SyslogTarget{"collector.example", 6514, true, ""}));
  auto six = parse_syslog_url("syslog://[::1]:1514");
  ASSERT_TRUE(six.ok());
  EXPECT_EQ(six->host, "::1");
  for (const char* bad : {"syslog://h", "syslog://h:0", "syslog://h:65536", "syslog://:514",
                          "syslog://h:51x", "udp://h:514", "syslog://a b:514", "syslog://[::1:5"}) {
    SCOPED_TRACE(bad);
    auto r = parse_syslog_url(bad);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("expected syslog://HOST:PORT"), std::string::npos);
  }
}

TEST(SyslogClientTest, ARefusedConnectionIsAnErrorNotAHang) {
  // Port 1 on loopback: nothing listens there on a test machine.
  auto c = SyslogClient::connect(SyslogTarget{"127.0.0.1", 1, false, ""}, std::chrono::seconds(5));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("cannot connect to the collector 127.0.0.1:1"), std::string::npos)
      << c.error().message;
}

}  // namespace
}  // namespace vigil
