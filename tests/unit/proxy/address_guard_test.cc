// The address guard as a table: resolved address (+ context) -> pass or the check that
// refused. Covers every built-in category in both families, the IPv4 an IPv6 address
// carries, interface addresses, deniedResolvedAddresses blocks, the test-only loopback
// relaxation, and the explicit-IP rule.
#include "proxy/address_guard.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vigil::proxy {
namespace {

using C = GuardCheck;

IpAddress ip(const std::string& s) { return boost::asio::ip::make_address(s); }

GuardContext context() {
  GuardContext g;
  g.denied = *parse_denied_resolved_addresses(
      {"10.0.0.0/8", "192.168.1.5", "fd00:abcd::/32", "203.0.113.7/24"});
  g.host_addresses = {ip("192.0.2.10"), ip("2001:db8::10"), ip("127.0.0.1"), ip("::1")};
  g.extra_metadata = {ip("198.51.100.254")};
  return g;
}

struct Row {
  std::string addr;
  C check;
};

TEST(AddressGuard, Table) {
  const GuardContext g = context();
  const std::vector<Row> rows = {
      // public addresses pass
      {"93.184.216.34", C::kPass},
      {"1.1.1.1", C::kPass},
      {"2606:2800:220:1:248:1893:25c8:1946", C::kPass},
      {"100.64.0.1", C::kPass},  // CGNAT is not denied by default (as srt)
      {"172.16.0.1", C::kPass},  // private ranges: list them in deniedResolvedAddresses
      {"11.0.0.1", C::kPass},
      {"192.168.1.6", C::kPass},
      {"203.0.114.1", C::kPass},
      // loopback
      {"127.0.0.1", C::kLoopback},
      {"127.255.255.254", C::kLoopback},
      {"127.0.0.2", C::kLoopback},
      {"::1", C::kLoopback},
      // unspecified / this network
      {"0.0.0.0", C::kUnspecified},
      {"0.1.2.3", C::kUnspecified},
      {"::", C::kUnspecified},
      // link-local
      {"169.254.0.1", C::kLinkLocal},
      {"169.254.255.255", C::kLinkLocal},
      {"fe80::1", C::kLinkLocal},
      {"febf::1", C::kLinkLocal},
      // multicast, reserved, broadcast
      {"224.0.0.1", C::kMulticast},
      {"239.255.255.250", C::kMulticast},
      {"ff02::1", C::kMulticast},
      {"240.0.0.1", C::kReserved},
      {"255.255.255.255", C::kReserved},
      // metadata endpoints
      {"169.254.169.254", C::kMetadata},
      {"fd00:ec2::254", C::kMetadata},
      {"100.100.100.200", C::kMetadata},
      {"198.51.100.254", C::kMetadata},  // what metadata.google.internal resolved to
      // metadata and platform endpoints outside link-local space: no other category
      // covers them (CGNAT, a public address, unique-local IPv6)
      {"168.63.129.16", C::kMetadata},  // Azure WireServer
      {"168.63.129.17", C::kPass},
      {"192.0.0.192", C::kMetadata},    // Oracle Cloud Classic
      {"fd00:ec2::23", C::kMetadata},   // AWS EKS Pod Identity
      {"fd00:ec2::253", C::kMetadata},  // AWS DNS (AWS's IPv6 service block)
      {"fd00:ec3::254", C::kPass},
      {"fd20:ce::254", C::kMetadata},  // Google Cloud
      {"fd20:ce::253", C::kPass},
      {"fd00:c1::a9fe:a9fe", C::kMetadata},  // Oracle Cloud Infrastructure
      {"fd00:42::42", C::kMetadata},         // Scaleway
      {"fd00:a9fe:a9fe::1", C::kMetadata},   // Akamai / Linode
      {"fd00:100::100:200", C::kMetadata},   // Alibaba Cloud
      {"fd00::1", C::kPass},                 // other unique-local addresses pass
      {"::ffff:168.63.129.16", C::kMetadata},
      {"64:ff9b::c000:c0", C::kMetadata},  // NAT64 of 192.0.0.192
      // this host
      {"192.0.2.10", C::kHostAddress},
      {"2001:db8::10", C::kHostAddress},
      {"192.0.2.11", C::kPass},
      // deniedResolvedAddresses
      {"10.0.0.1", C::kDeniedBlock},
      {"10.255.255.255", C::kDeniedBlock},
      {"192.168.1.5", C::kDeniedBlock},
      {"fd00:abcd:1::1", C::kDeniedBlock},
      {"fd00:abce::1", C::kPass},
      {"203.0.113.200", C::kDeniedBlock},  // host bits in the entry are ignored
      // an IPv6 carrying an IPv4 is judged as that IPv4 too
      {"::ffff:127.0.0.1", C::kLoopback},
      {"::ffff:169.254.169.254", C::kMetadata},
      {"::ffff:10.1.2.3", C::kDeniedBlock},
      {"::ffff:192.0.2.10", C::kHostAddress},
      {"::ffff:93.184.216.34", C::kPass},
      {"64:ff9b::7f00:1", C::kLoopback},  // NAT64
      {"64:ff9b::a9fe:a9fe", C::kMetadata},
      {"::127.0.0.1", C::kLoopback},     // IPv4-compatible
      {"2002:7f00:1::1", C::kLoopback},  // 6to4 through 127.0.0.1
      {"2002:a9fe:a9fe::1", C::kMetadata},
      {"2001:0:4136:e378:8000:63bf:3fff:fdd2", C::kPass},  // Teredo, public client
      {"2001::5601:5601", C::kMetadata},                   // Teredo carrying 169.254.169.254
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.addr);
    const auto v = guard_address(ip(r.addr), g);
    EXPECT_EQ(v.check, r.check) << to_string(v.check) << ": " << v.why;
    EXPECT_EQ(v.allowed(), r.check == C::kPass);
    if (!v.allowed()) {
      EXPECT_FALSE(v.why.empty());
    }
  }
}

TEST(AddressGuard, Reasons) {
  const GuardContext g = context();
  EXPECT_EQ(guard_address(ip("127.0.0.1"), g).why, "a loopback address");
  EXPECT_EQ(guard_address(ip("10.1.2.3"), g).why,
            "in network.deniedResolvedAddresses[0] (10.0.0.0/8)");
  EXPECT_EQ(guard_address(ip("::ffff:169.254.169.254"), g).why,
            "a cloud metadata endpoint (it carries 169.254.169.254)");
}

// Test mode relaxes loopback only: 127.0.0.1 is also an interface address, and must
// pass for a test server on loopback to be reachable; nothing else changes.
TEST(AddressGuard, TestModeAllowsLoopbackOnly) {
  GuardContext g = context();
  g.allow_loopback = true;
  EXPECT_TRUE(guard_address(ip("127.0.0.1"), g).allowed());
  EXPECT_TRUE(guard_address(ip("::1"), g).allowed());
  EXPECT_TRUE(guard_address(ip("::ffff:127.0.0.1"), g).allowed());
  EXPECT_EQ(guard_address(ip("169.254.169.254"), g).check, C::kMetadata);
  EXPECT_EQ(guard_address(ip("0.0.0.0"), g).check, C::kUnspecified);
  EXPECT_EQ(guard_address(ip("192.0.2.10"), g).check, C::kHostAddress);
  EXPECT_EQ(guard_address(ip("10.0.0.1"), g).check, C::kDeniedBlock);
}

// The explicit-IP rule: an IP literal that the allow list names exactly skips the
// built-in categories, never the policy's own denied blocks.
TEST(AddressGuard, ExplicitIpSkipsBuiltinsNotDeniedBlocks) {
  const GuardContext g = context();
  EXPECT_TRUE(guard_address(ip("127.0.0.1"), g, true).allowed());
  EXPECT_TRUE(guard_address(ip("169.254.169.254"), g, true).allowed());
  EXPECT_TRUE(guard_address(ip("192.0.2.10"), g, true).allowed());
  EXPECT_EQ(guard_address(ip("10.0.0.1"), g, true).check, C::kDeniedBlock);
  EXPECT_EQ(guard_address(ip("::ffff:10.0.0.1"), g, true).check, C::kDeniedBlock);
}

// This machine's addresses could not be listed: an address that would have been compared
// with them is refused, naming the cause, never let through by an empty list. What is
// refused for its own sake still says so; explicitly allowed IPs skip it like the other
// built-in checks; the test-only loopback relaxation still applies to loopback.
TEST(AddressGuard, UnlistedHostAddressesRefuse) {
  GuardContext g = context();
  g.host_addresses.clear();
  g.host_addresses_error = "getifaddrs: Too many open files";
  const GuardVerdict v = guard_address(ip("198.18.0.1"), g);
  EXPECT_EQ(v.check, C::kHostAddressesUnknown);
  EXPECT_EQ(v.why,
            "possibly one of this machine's own addresses: they could not be listed "
            "(getifaddrs: Too many open files)");
  EXPECT_STREQ(to_string(v.check), "host-addresses-unknown");
  EXPECT_EQ(guard_address(ip("2001:db8::99"), g).check, C::kHostAddressesUnknown);
  EXPECT_EQ(guard_address(ip("169.254.169.254"), g).check, C::kMetadata);
  EXPECT_EQ(guard_address(ip("10.0.0.1"), g).check, C::kDeniedBlock);
  EXPECT_TRUE(guard_address(ip("198.18.0.1"), g, true).allowed());
  g.allow_loopback = true;
  EXPECT_TRUE(guard_address(ip("127.0.0.1"), g).allowed());
  EXPECT_EQ(guard_address(ip("198.18.0.1"), g).check, C::kHostAddressesUnknown);
  // Listed again: the same address passes.
  g.host_addresses_error.clear();
  EXPECT_TRUE(guard_address(ip("198.18.0.1"), g).allowed());
}

TEST(AddressGuard, ParseBlocks) {
  struct Good {
    std::string in;
    std::string network;
    unsigned prefix;
  };
  const std::vector<Good> good = {
      {"10.0.0.0/8", "10.0.0.0", 8},
      {"10.1.2.3/8", "10.0.0.0", 8},
      {"192.168.1.5", "192.168.1.5", 32},
      {"0.0.0.0/0", "0.0.0.0", 0},
      {"fd00::/8", "fd00::", 8},
      {"[::1]", "::1", 128},
      {"::ffff:0:0/96", "::ffff:0.0.0.0", 96},
      {"10.0.0.0/32", "10.0.0.0", 32},
      {"2001:db8::1/127", "2001:db8::", 127},
  };
  for (const auto& r : good) {
    SCOPED_TRACE(r.in);
    const auto b = parse_address_block(r.in);
    ASSERT_TRUE(b.ok()) << b.error().message;
    EXPECT_EQ(b->network.to_string(), r.network);
    EXPECT_EQ(b->prefix, r.prefix);
  }
  for (const std::string bad :
       {"", "10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0.0/x", "10.0.0/8", "example.com",
        "10.0.0.0/8/8", "fe80::1%eth0", "10.0.0.0/-1", "1.2.3.4 ", "127.1"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(parse_address_block(bad).ok());
  }
  const auto list = parse_denied_resolved_addresses({"10.0.0.0/8", "nope"});
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.error().code, Errc::kInvalidPolicy);
  EXPECT_EQ(list.error().message.rfind("network.deniedResolvedAddresses[1]: \"nope\"", 0), 0u)
      << list.error().message;
}

// Every entry of the built-in table parses (a typo would silently drop one), and each is
// refused as metadata with an empty context.
TEST(AddressGuard, BuiltinMetadataList) {
  const auto& m = builtin_metadata_blocks();
  ASSERT_EQ(m.size(), 10u);
  for (const auto& b : m) {
    SCOPED_TRACE(b.entry);
    EXPECT_EQ(guard_address(b.network, GuardContext{}).check, C::kMetadata);
    EXPECT_EQ(b.origin, "the built-in metadata endpoints");
  }
}

}  // namespace
}  // namespace vigil::proxy
