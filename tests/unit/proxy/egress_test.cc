// The whole egress decision without I/O: decide_target (malformed -> canonical ->
// denied -> allowed -> default deny) then choose_addresses (the guard on what the name
// resolved to), with the event each produces.
#include "proxy/egress.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vigil::proxy {
namespace {

IpAddress ip(const std::string& s) { return boost::asio::ip::make_address(s); }

DomainMatcher matcher() {
  NetworkPolicy net;
  net.allowed_domains = {"example.com", "*.allowed.test", "127.0.0.1:8080", "[::1]",
                         "169.254.169.254"};
  net.denied_domains = {"bad.allowed.test", "*.evil.allowed.test"};
  net.denied_domain_reasons = {{"bad.allowed.test", "use good.allowed.test instead"}};
  return *DomainMatcher::build(net);
}

struct Row {
  std::string host;
  std::uint16_t port;
  NetVerdict verdict;
  std::string_view refused_by;
  std::string event_host;
  std::string rule;
  bool explicit_ip = false;
};

TEST(Egress, DecideTarget) {
  const DomainMatcher m = matcher();
  constexpr auto A = NetVerdict::kAllowed;
  constexpr auto D = NetVerdict::kDenied;
  const std::vector<Row> rows = {
      {"example.com", 443, A, "", "example.com", "example.com"},
      {"EXAMPLE.COM.", 80, A, "", "example.com", "example.com"},
      {"www.example.com", 443, D, refused_by::kNotAllowed, "www.example.com", ""},
      {"a.allowed.test", 443, A, "", "a.allowed.test", "*.allowed.test"},
      {"allowed.test", 443, D, refused_by::kNotAllowed, "allowed.test", ""},  // never the apex
      {"bad.allowed.test", 443, D, refused_by::kDeniedDomain, "bad.allowed.test",
       "bad.allowed.test"},
      {"x.evil.allowed.test", 443, D, refused_by::kDeniedDomain, "x.evil.allowed.test",
       "*.evil.allowed.test"},
      // IP literals: allowed only by an entry naming that IP, and then explicit
      {"127.0.0.1", 8080, A, "", "127.0.0.1", "127.0.0.1:8080", true},
      {"0x7f.1", 8080, A, "", "127.0.0.1", "127.0.0.1:8080", true},
      {"2130706433", 8080, A, "", "127.0.0.1", "127.0.0.1:8080", true},
      {"127.0.0.1", 8081, D, refused_by::kNotAllowed, "127.0.0.1", ""},
      {"[::1]", 22, A, "", "::1", "[::1]", true},
      {"::1", 22, A, "", "::1", "[::1]", true},
      {"::ffff:127.0.0.1", 8080, A, "", "::ffff:127.0.0.1", "127.0.0.1:8080", true},
      {"93.184.216.34", 80, D, refused_by::kNotAllowed, "93.184.216.34", ""},
      // malformed
      {"", 80, D, refused_by::kMalformedHost, "", ""},
      {"exa mple.com", 80, D, refused_by::kMalformedHost, "exa mple.com", ""},
      {"256.1.1.1", 80, D, refused_by::kMalformedHost, "256.1.1.1", ""},
      {"a..b", 80, D, refused_by::kMalformedHost, "a..b", ""},
      {"example.com:443", 80, D, refused_by::kMalformedHost, "example.com:443", ""},
      {"fe80::1%eth0", 80, D, refused_by::kMalformedHost, "fe80::1%eth0", ""},
      {"\xC3\xA9.example.com", 80, D, refused_by::kMalformedHost, "\xC3\xA9.example.com", ""},
      {"example.com", 0, D, refused_by::kMalformedHost, "example.com", ""},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.host + ":" + std::to_string(r.port));
    const TargetDecision d = decide_target(m, NetProto::kConnect, r.host, r.port);
    EXPECT_EQ(d.event.verdict, r.verdict) << d.event.reason;
    EXPECT_EQ(d.event.refused_by, r.refused_by) << d.event.reason;
    EXPECT_EQ(d.event.host, r.event_host);
    EXPECT_EQ(d.event.rule, r.rule);
    EXPECT_EQ(d.event.port, r.port);
    EXPECT_EQ(d.event.proto, NetProto::kConnect);
    EXPECT_EQ(d.explicit_ip, r.explicit_ip);
    EXPECT_FALSE(d.event.reason.empty());
    EXPECT_EQ(d.needs_resolution(), r.verdict == NetVerdict::kAllowed && !r.explicit_ip);
  }
}

TEST(Egress, Reasons) {
  const DomainMatcher m = matcher();
  EXPECT_EQ(decide_target(m, NetProto::kHttp, "bad.allowed.test", 80).event.reason,
            "use good.allowed.test instead");
  EXPECT_EQ(decide_target(m, NetProto::kHttp, "nope.test", 80).event.reason, kReasonNotAllowed);
  EXPECT_EQ(decide_target(m, NetProto::kHttp, "a..b", 80).event.reason,
            "malformed host: empty label (two dots in a row, or a leading dot)");
}

TEST(Egress, GuardAfterResolution) {
  const DomainMatcher m = matcher();
  GuardContext g;
  g.host_addresses = {ip("192.0.2.10")};

  // An allowed name that resolves to loopback is refused by the guard.
  TargetDecision d = decide_target(m, NetProto::kSocks5, "a.allowed.test", 443);
  auto passing = choose_addresses(d, {ip("127.0.0.1")}, g);
  EXPECT_TRUE(passing.empty());
  EXPECT_EQ(d.event.verdict, NetVerdict::kDenied);
  EXPECT_EQ(d.event.refused_by, refused_by::kAddressGuard);
  EXPECT_EQ(d.event.rule, "*.allowed.test");  // the rule that allowed the name stays
  EXPECT_EQ(d.event.address, "127.0.0.1");
  EXPECT_EQ(d.event.guard_check, "loopback");
  EXPECT_EQ(d.event.reason,
            "address guard: a.allowed.test resolves to 127.0.0.1, a loopback address");

  // Mixed answers: the bad addresses are dropped, the connection uses a good one.
  d = decide_target(m, NetProto::kSocks5, "a.allowed.test", 443);
  passing = choose_addresses(
      d, {ip("169.254.169.254"), ip("93.184.216.34"), ip("192.0.2.10"), ip("1.1.1.1")}, g);
  ASSERT_EQ(passing.size(), 2u);
  EXPECT_EQ(passing[0].to_string(), "93.184.216.34");
  EXPECT_EQ(passing[1].to_string(), "1.1.1.1");
  EXPECT_EQ(d.event.verdict, NetVerdict::kAllowed);
  EXPECT_EQ(d.event.address, "93.184.216.34");

  // This host's own address.
  d = decide_target(m, NetProto::kSocks5, "a.allowed.test", 443);
  EXPECT_TRUE(choose_addresses(d, {ip("192.0.2.10")}, g).empty());
  EXPECT_EQ(d.event.guard_check, "host-address");

  // Nothing resolved at all.
  d = decide_target(m, NetProto::kSocks5, "a.allowed.test", 443);
  EXPECT_TRUE(choose_addresses(d, {}, g).empty());
  EXPECT_EQ(d.event.refused_by, refused_by::kAddressGuard);
}

TEST(Egress, ExplicitIpLiteralPassesTheGuard) {
  const DomainMatcher m = matcher();
  GuardContext g;
  g.denied = *parse_denied_resolved_addresses({"169.254.0.0/16"});
  TargetDecision d = decide_target(m, NetProto::kConnect, "127.0.0.1", 8080);
  ASSERT_TRUE(literal_address(d).has_value());
  EXPECT_EQ(choose_addresses(d, {*literal_address(d)}, g).size(), 1u);
  EXPECT_EQ(d.event.verdict, NetVerdict::kAllowed);

  // ... but not past the policy's own deniedResolvedAddresses.
  d = decide_target(m, NetProto::kConnect, "169.254.169.254", 80);
  ASSERT_TRUE(d.allowed());
  EXPECT_TRUE(choose_addresses(d, {*literal_address(d)}, g).empty());
  EXPECT_EQ(d.event.guard_check, "denied-block");
  EXPECT_EQ(
      d.event.reason,
      "address guard: 169.254.169.254 is in network.deniedResolvedAddresses[0] (169.254.0.0/16)");
}

}  // namespace
}  // namespace vigil::proxy
