// The captured listener's marks (proxy/captured.h): who made a captured connection, and a
// datagram's refusal, whatever the allowlist said.
#include "proxy/captured.h"

#include <gtest/gtest.h>

namespace vigil::proxy {
namespace {

http::RequestHead connect_head(std::vector<http::Header> headers) {
  http::RequestHead h;
  h.method = "CONNECT";
  h.target = "allowed.test:443";
  h.headers = std::move(headers);
  return h;
}

TEST(Captured, TheProgramHeaderNamesTheCallerCapped) {
  NetDecision d;
  mark_captured(connect_head({{"Host", "x"}, {"vigil-program", "curl (/usr/bin/curl)"}}), &d);
  EXPECT_TRUE(d.captured);
  EXPECT_EQ(d.program, "curl (/usr/bin/curl)");
  NetDecision none;
  mark_captured(connect_head({}), &none);
  EXPECT_TRUE(none.captured);
  EXPECT_EQ(none.program, "");
  NetDecision long_name;
  mark_captured(connect_head({{"Vigil-Program", std::string(500, 'p')}}), &long_name);
  EXPECT_EQ(long_name.program.size(), 200u);
}

TEST(Captured, ADatagramIsRefusedEvenForAnAllowedHost) {
  NetDecision d;
  d.verdict = NetVerdict::kAllowed;
  d.rule = "allowed.test";
  d.address = "127.0.0.1";
  EXPECT_TRUE(refuse_datagram(connect_head({{"Vigil-Datagram", "udp"}}), &d));
  EXPECT_EQ(d.verdict, NetVerdict::kDenied);
  EXPECT_EQ(d.refused_by, kRefusedDatagram);
  EXPECT_EQ(d.rule, "");
  EXPECT_EQ(d.address, "");
  EXPECT_NE(d.reason.find("UDP is not carried"), std::string::npos) << d.reason;
  // It never points at the allowlist: adding the host would not help.
  EXPECT_EQ(d.reason.find("allowedDomains"), std::string::npos) << d.reason;
}

TEST(Captured, AnOrdinaryConnectIsNotADatagram) {
  NetDecision d;
  d.verdict = NetVerdict::kAllowed;
  EXPECT_FALSE(refuse_datagram(connect_head({{"Vigil-Program", "ssh"}}), &d));
  EXPECT_EQ(d.verdict, NetVerdict::kAllowed);
}

}  // namespace
}  // namespace vigil::proxy
