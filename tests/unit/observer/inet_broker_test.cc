// The connect broker's pure parts (observer/inet_broker.h) and the registrations it shares
// with the bridge and the datagram sink (observer/capture_route.h).
#include "observer/inet_broker.h"

#include <gtest/gtest.h>

#include "observer/capture_route.h"

namespace vigil::init {
namespace {

TEST(InetBroker, TheConnectNamesTheCallerAndADatagramSaysSo) {
  EXPECT_EQ(capture_request("allowed.test", 443, "curl (/usr/bin/curl)"),
            "CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n"
            "Vigil-Program: curl (/usr/bin/curl)\r\n\r\n");
  EXPECT_EQ(capture_request("2001:db8::1", 53, "dig\r\nX: y", true),
            "CONNECT [2001:db8::1]:53 HTTP/1.1\r\nHost: [2001:db8::1]:53\r\n"
            "Vigil-Program: dig??X: y\r\nVigil-Datagram: udp\r\n\r\n");
}

TEST(InetBroker, AnswerStatus) {
  EXPECT_EQ(answer_status("HTTP/1.1 200 Connection established\r\n\r\n"), 200);
  EXPECT_EQ(answer_status("HTTP/1.0 403 Forbidden\r\n\r\n"), 403);
  EXPECT_EQ(answer_status("garbage"), 0);
  EXPECT_EQ(answer_status(""), 0);
}

TEST(CaptureRoute, ADatagramRegistrationIsTakenOnce) {
  CaptureRoute r("/proc/self/fd/3");
  r.expect_datagram(4000, DatagramPeer{"a.test", 443, 1, 2, UniqueFd()});
  auto got = r.take_datagram(4000);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->host, "a.test");
  EXPECT_EQ(got->port, 443);
  EXPECT_FALSE(r.take_datagram(4000));
  EXPECT_FALSE(r.take_datagram(4001));
}

TEST(CaptureRoute, DatagramRegistrationsAreBoundedOldestFirst) {
  CaptureRoute r("/proc/self/fd/3");
  for (std::uint16_t p = 1; p <= kMaxDatagramPeers + 10; ++p)
    r.expect_datagram(p, DatagramPeer{"h" + std::to_string(p), p, 1, 2, UniqueFd()});
  for (std::uint16_t p = 1; p <= 10; ++p) EXPECT_FALSE(r.take_datagram(p)) << p;
  for (std::uint16_t p = 11; p <= kMaxDatagramPeers + 10; ++p) EXPECT_TRUE(r.take_datagram(p)) << p;
  // A port registered again is the new registration; the old one's turn does not evict it.
  r.expect_datagram(7, DatagramPeer{"old", 1, 1, 2, UniqueFd()});
  r.expect_datagram(7, DatagramPeer{"new", 1, 1, 2, UniqueFd()});
  for (std::uint16_t p = 100; p < 100 + kMaxDatagramPeers - 1; ++p)
    r.expect_datagram(p, DatagramPeer{"x", 1, 1, 2, UniqueFd()});
  auto seven = r.take_datagram(7);
  ASSERT_TRUE(seven);
  EXPECT_EQ(seven->host, "new");
}

}  // namespace
}  // namespace vigil::init
