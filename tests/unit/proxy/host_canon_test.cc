// Host canonicalisation: every spelling a client can use for one destination must come
// out as one text, and anything that is not a host must be an error.
#include "proxy/host_canon.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace vigil::proxy {
namespace {

using namespace std::string_literals;
using Kind = CanonicalHost::Kind;
using E = Ipv4Embedding;

struct Good {
  std::string in;
  Kind kind;
  std::string text;
  std::optional<std::string> v4 = std::nullopt;  // embedded IPv4 (IPv6 only)
  E embedding = E::kNone;
};

std::string labels_of(std::size_t total_len) {
  // "aaa...a.aaa...a..." of exactly total_len characters, labels of 63.
  std::string s;
  while (s.size() < total_len) {
    if (!s.empty()) s += '.';
    s += std::string(std::min<std::size_t>(63, total_len - s.size()), 'a');
  }
  if (s.back() == '.') s.back() = 'a';
  return s;
}

const std::vector<Good>& good_cases() {
  static const std::vector<Good> cases = {
      // Names: case and one trailing dot.
      {"example.com", Kind::kName, "example.com"},
      {"EXAMPLE.COM", Kind::kName, "example.com"},
      {"Example.Com.", Kind::kName, "example.com"},
      {"localhost", Kind::kName, "localhost"},
      {"LocalHost.", Kind::kName, "localhost"},
      {"_dmarc.Example.com", Kind::kName, "_dmarc.example.com"},
      {"a-b.c_d.example", Kind::kName, "a-b.c_d.example"},
      {"xn--mnchen-3ya.de", Kind::kName, "xn--mnchen-3ya.de"},
      {"127.0.0.1.nip.io", Kind::kName, "127.0.0.1.nip.io"},  // a name: the resolver decides
      {"0x7f.1.evil", Kind::kName, "0x7f.1.evil"},
      {"1.2.3.4x", Kind::kName, "1.2.3.4x"},
      {"1e5", Kind::kName, "1e5"},
      {"0xg", Kind::kName, "0xg"},
      {std::string(63, 'a') + ".com", Kind::kName, std::string(63, 'a') + ".com"},
      {labels_of(253), Kind::kName, labels_of(253)},
      {labels_of(253) + ".", Kind::kName, labels_of(253)},

      // Loopback in every inet_aton spelling.
      {"127.0.0.1", Kind::kIPv4, "127.0.0.1"},
      {"127.1", Kind::kIPv4, "127.0.0.1"},
      {"127.0.1", Kind::kIPv4, "127.0.0.1"},
      {"0x7f.0.0.1", Kind::kIPv4, "127.0.0.1"},
      {"0X7F.0.0.1", Kind::kIPv4, "127.0.0.1"},
      {"0x7f.1", Kind::kIPv4, "127.0.0.1"},
      {"0x7f.0.1", Kind::kIPv4, "127.0.0.1"},
      {"0x7f000001", Kind::kIPv4, "127.0.0.1"},
      {"0x7F000001", Kind::kIPv4, "127.0.0.1"},
      {"2130706433", Kind::kIPv4, "127.0.0.1"},
      {"017700000001", Kind::kIPv4, "127.0.0.1"},
      {"0177.0.0.1", Kind::kIPv4, "127.0.0.1"},
      {"0177.1", Kind::kIPv4, "127.0.0.1"},
      {"00000177.0.0.01", Kind::kIPv4, "127.0.0.1"},
      {"127.000.000.001", Kind::kIPv4, "127.0.0.1"},
      {"0x7f.0x0.0x0.0x1", Kind::kIPv4, "127.0.0.1"},
      {"0x0000007f.1", Kind::kIPv4, "127.0.0.1"},
      {"127.0.0.1.", Kind::kIPv4, "127.0.0.1"},
      {"0x7f.1.", Kind::kIPv4, "127.0.0.1"},
      {"127.0.0.255", Kind::kIPv4, "127.0.0.255"},

      // The cloud metadata address.
      {"169.254.169.254", Kind::kIPv4, "169.254.169.254"},
      {"0xa9fea9fe", Kind::kIPv4, "169.254.169.254"},
      {"0xA9FEA9FE", Kind::kIPv4, "169.254.169.254"},
      {"2852039166", Kind::kIPv4, "169.254.169.254"},
      {"025177524776", Kind::kIPv4, "169.254.169.254"},
      {"0251.0376.0251.0376", Kind::kIPv4, "169.254.169.254"},
      {"169.16689662", Kind::kIPv4, "169.254.169.254"},
      {"169.254.43518", Kind::kIPv4, "169.254.169.254"},
      {"0xa9.0xfe.0xa9.0xfe", Kind::kIPv4, "169.254.169.254"},
      {"0xa9.254.0251.0xfe", Kind::kIPv4, "169.254.169.254"},
      {"0251.0xfe.43518", Kind::kIPv4, "169.254.169.254"},
      {"169.254.169.254.", Kind::kIPv4, "169.254.169.254"},

      // Range edges.
      {"0", Kind::kIPv4, "0.0.0.0"},
      {"0x0", Kind::kIPv4, "0.0.0.0"},
      {"00", Kind::kIPv4, "0.0.0.0"},
      {"4294967295", Kind::kIPv4, "255.255.255.255"},
      {"0xffffffff", Kind::kIPv4, "255.255.255.255"},
      {"037777777777", Kind::kIPv4, "255.255.255.255"},
      {"255.255.255.255", Kind::kIPv4, "255.255.255.255"},
      {"1.16777215", Kind::kIPv4, "1.255.255.255"},
      {"1.2.65535", Kind::kIPv4, "1.2.255.255"},
      {"10.0.0.1", Kind::kIPv4, "10.0.0.1"},

      // IPv6: brackets stripped, inet_ntop form.
      {"::1", Kind::kIPv6, "::1"},
      {"[::1]", Kind::kIPv6, "::1"},
      {"0:0:0:0:0:0:0:1", Kind::kIPv6, "::1"},
      {"[0000:0000::0001]", Kind::kIPv6, "::1"},
      {"::", Kind::kIPv6, "::"},
      {"2001:DB8::1", Kind::kIPv6, "2001:db8::1"},
      {"2001:db8:0:0:1:0:0:1", Kind::kIPv6, "2001:db8::1:0:0:1"},
      {"fd00:ec2::254", Kind::kIPv6, "fd00:ec2::254"},
      {"[FD00:EC2:0::254]", Kind::kIPv6, "fd00:ec2::254"},
      {"fe80::1", Kind::kIPv6, "fe80::1"},

      // IPv6 carrying an IPv4: reported with it.
      {"::ffff:127.0.0.1", Kind::kIPv6, "::ffff:127.0.0.1", "127.0.0.1", E::kMapped},
      {"[::ffff:127.0.0.1]", Kind::kIPv6, "::ffff:127.0.0.1", "127.0.0.1", E::kMapped},
      {"::ffff:7f00:1", Kind::kIPv6, "::ffff:127.0.0.1", "127.0.0.1", E::kMapped},
      {"::FFFF:A9FE:A9FE", Kind::kIPv6, "::ffff:169.254.169.254", "169.254.169.254", E::kMapped},
      {"0:0:0:0:0:ffff:a9fe:a9fe", Kind::kIPv6, "::ffff:169.254.169.254", "169.254.169.254",
       E::kMapped},
      {"::ffff:0.0.0.0", Kind::kIPv6, "::ffff:0.0.0.0", "0.0.0.0", E::kMapped},
      {"::127.0.0.1", Kind::kIPv6, "::127.0.0.1", "127.0.0.1", E::kCompatible},
      {"::7f00:1", Kind::kIPv6, "::127.0.0.1", "127.0.0.1", E::kCompatible},
      {"::169.254.169.254", Kind::kIPv6, "::169.254.169.254", "169.254.169.254", E::kCompatible},
      {"::2", Kind::kIPv6, "::2", "0.0.0.2", E::kCompatible},
      {"64:ff9b::7f00:1", Kind::kIPv6, "64:ff9b::7f00:1", "127.0.0.1", E::kNat64},
      {"64:ff9b::127.0.0.1", Kind::kIPv6, "64:ff9b::7f00:1", "127.0.0.1", E::kNat64},
      {"[64:FF9B::169.254.169.254]", Kind::kIPv6, "64:ff9b::a9fe:a9fe", "169.254.169.254",
       E::kNat64},
      {"2002:7f00:1::", Kind::kIPv6, "2002:7f00:1::", "127.0.0.1", E::k6to4},
      {"2002:a9fe:a9fe::1", Kind::kIPv6, "2002:a9fe:a9fe::1", "169.254.169.254", E::k6to4},
      {"2002:a9fe:a9fe:ffff:ffff:ffff:ffff:ffff", Kind::kIPv6,
       "2002:a9fe:a9fe:ffff:ffff:ffff:ffff:ffff", "169.254.169.254", E::k6to4},
      // Teredo: client IPv4 is the last 32 bits, inverted (RFC 4380's example: 192.0.2.45).
      {"2001:0:4136:e378:8000:63bf:3fff:fdd2", Kind::kIPv6, "2001:0:4136:e378:8000:63bf:3fff:fdd2",
       "192.0.2.45", E::kTeredo},
      {"2001::5601:5601", Kind::kIPv6, "2001::5601:5601", "169.254.169.254", E::kTeredo},
      {"2001:0:1:2:3:4:80ff:fffe", Kind::kIPv6, "2001:0:1:2:3:4:80ff:fffe", "127.0.0.1",
       E::kTeredo},
      // Near misses: not the prefix, so no embedded address.
      {"64:ff9b:1::7f00:1", Kind::kIPv6, "64:ff9b:1::7f00:1"},
      {"2001:db8::7f00:1", Kind::kIPv6, "2001:db8::7f00:1"},
      {"2003:7f00:1::", Kind::kIPv6, "2003:7f00:1::"},
      {"::fffe:7f00:1", Kind::kIPv6, "::fffe:7f00:1"},
  };
  return cases;
}

TEST(HostCanon, Table) {
  for (const auto& c : good_cases()) {
    SCOPED_TRACE(quote_for_message(c.in));
    const auto r = canonicalize_host(c.in);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->kind, c.kind);
    EXPECT_EQ(r->text, c.text);
    EXPECT_EQ(r->embedded_ipv4, c.v4);
    EXPECT_EQ(r->embedding, c.embedding);
  }
}

TEST(HostCanon, CanonicalFormIsAFixedPoint) {
  for (const auto& c : good_cases()) {
    SCOPED_TRACE(c.in);
    const auto first = canonicalize_host(c.in);
    ASSERT_TRUE(first.ok());
    const auto second = canonicalize_host(first->text);
    ASSERT_TRUE(second.ok()) << second.error().message;
    EXPECT_EQ(*second, *first);
  }
}

// glibc's inet_aton is what getaddrinfo uses for numeric hosts: ours must read every
// IPv4 spelling in the table as the same address (it does not take a trailing dot).
TEST(HostCanon, AgreesWithGlibcInetAton) {
  int checked = 0;
  for (const auto& c : good_cases()) {
    if (c.kind == Kind::kIPv6 || c.in.back() == '.') continue;
    SCOPED_TRACE(c.in);
    in_addr a{};
    const int glibc_ok = inet_aton(c.in.c_str(), &a);
    if (c.kind == Kind::kName) {
      EXPECT_EQ(glibc_ok, 0) << "glibc reads a name as a number";
      continue;
    }
    ASSERT_EQ(glibc_ok, 1);
    char buf[INET_ADDRSTRLEN];
    ASSERT_NE(inet_ntop(AF_INET, &a, buf, sizeof buf), nullptr);
    EXPECT_EQ(c.text, buf);
    ++checked;
  }
  EXPECT_GE(checked, 35);
}

struct Bad {
  std::string in;
  std::string fragment;  // must appear in the error message
};

const std::vector<Bad>& bad_cases() {
  static const std::vector<Bad> cases = {
      {"", "empty host"},
      {".", "empty host"},
      {"..", "empty label"},
      {"a..b", "empty label"},
      {".example.com", "empty label"},
      {"example.com..", "empty label"},
      {"exa mple.com", "whitespace"},
      {" example.com", "whitespace"},
      {"example.com\t", "whitespace"},
      {"example.com\n", "whitespace"},
      {"evil.com\0.example.com"s, "NUL"},
      {"exa\x01mple.com", "control character"},
      {"exa\x7fmple.com", "control character"},
      {"m\xc3\xbcnchen.de", "non-ASCII"},
      {"ex%41mple.com", "'%'"},
      {"user@example.com", "'@'"},
      {"example.com@evil.com", "'@'"},
      {"example.com/path", "path separator"},
      {"http://example.com", "path separator"},
      {"a\\b.com", "path separator"},
      {"example.com:443", "port"},
      {"127.0.0.1:80", "port"},
      {"[::1]:443", "port"},
      {"[::1]x", "text after ']'"},
      {"[::1", "without a matching ']'"},
      {"::1]", "unbalanced"},
      {"example.com]", "unbalanced"},
      {"[[::1]]", "nested"},
      {"[]", "brackets are only for IPv6"},
      {"[127.0.0.1]", "brackets are only for IPv6"},
      {"[example.com]", "brackets are only for IPv6"},
      {"fe80::1%eth0", "zone"},
      {"[fe80::1%eth0]", "zone"},
      {"fe80::1%25eth0", "zone"},
      {":::1", "not a valid IPv6"},
      {"1:2:3:4:5:6:7:8:9", "not a valid IPv6"},
      {"::ffff:1.2.3.256", "not a valid IPv6"},
      {"::ffff:01.2.3.4", "not a valid IPv6"},
      {"2001:db8::g", "not a valid IPv6"},
      {std::string(46, '1') + "::", "not a valid IPv6"},
      {std::string(64, 'a') + ".com", "longer than 63"},
      {labels_of(254), "longer than 253"},
      {"exa*mple.com", "invalid character"},
      {"*.example.com", "invalid character"},
      {"ex!ample.com", "invalid character"},
      {"ex'ample.com", "invalid character"},
      {"ex\"ample.com", "invalid character"},
      // Ends in a number, so it is an IPv4 address or nothing.
      {"256.0.0.1", "not a valid IPv4"},
      {"1.2.3.256", "not a valid IPv4"},
      {"1.2.65536", "not a valid IPv4"},
      {"1.16777216", "not a valid IPv4"},
      {"4294967296", "not a valid IPv4"},
      {"0x100000000", "not a valid IPv4"},
      {"99999999999999999999999", "not a valid IPv4"},
      {"08.0.0.1", "not a valid IPv4"},
      {"0119", "not a valid IPv4"},
      {"1.2.3.4.5", "not a valid IPv4"},
      {"0x", "not a valid IPv4"},
      {"1.2.3.0x", "not a valid IPv4"},
      {"example.123", "not a valid IPv4"},
      {"0x1g.1", "not a valid IPv4"},
  };
  return cases;
}

TEST(HostCanon, Malformed) {
  ASSERT_GE(bad_cases().size(), 25u);
  for (const auto& c : bad_cases()) {
    SCOPED_TRACE(quote_for_message(c.in));
    const auto r = canonicalize_host(c.in);
    ASSERT_FALSE(r.ok()) << "accepted as " << r->text;
    EXPECT_EQ(r.error().code, Errc::kInvalidPolicy);
    EXPECT_NE(r.error().message.find(c.fragment), std::string::npos) << r.error().message;
    // The message names the input, quoted so control bytes stay escaped.
    EXPECT_EQ(r.error().message.rfind("host " + quote_for_message(c.in) + ": ", 0), 0u)
        << r.error().message;
  }
}

// The numbers glibc refuses we refuse too (a refusal is safe; the reverse is the bug).
TEST(HostCanon, RejectedNumbersAreRejectedByGlibcToo) {
  for (const char* s : {"256.0.0.1", "1.2.3.256", "1.2.65536", "1.16777216", "4294967296",
                        "0x100000000", "08.0.0.1", "0119", "1.2.3.4.5", "0x", "1.2.3.0x"}) {
    SCOPED_TRACE(s);
    in_addr a{};
    EXPECT_EQ(inet_aton(s, &a), 0);
    EXPECT_FALSE(parse_inet_aton(s).has_value());
  }
}

TEST(HostCanon, ParseInetAtonParts) {
  EXPECT_EQ(parse_inet_aton("1"), 1u);
  EXPECT_EQ(parse_inet_aton("1.2"), 0x01000002u);
  EXPECT_EQ(parse_inet_aton("1.2.3"), 0x01020003u);
  EXPECT_EQ(parse_inet_aton("1.2.3.4"), 0x01020304u);
  EXPECT_EQ(parse_inet_aton("010"), 8u);
  EXPECT_EQ(parse_inet_aton("0x10"), 16u);
  EXPECT_FALSE(parse_inet_aton(""));
  EXPECT_FALSE(parse_inet_aton("."));
  EXPECT_FALSE(parse_inet_aton("1."));
  EXPECT_FALSE(parse_inet_aton(".1"));
  EXPECT_FALSE(parse_inet_aton("1..2"));
  EXPECT_FALSE(parse_inet_aton("-1"));
  EXPECT_FALSE(parse_inet_aton("+1"));
}

TEST(HostCanon, FormatIpv4) {
  EXPECT_EQ(format_ipv4(0), "0.0.0.0");
  EXPECT_EQ(format_ipv4(0x7f000001), "127.0.0.1");
  EXPECT_EQ(format_ipv4(0xffffffff), "255.255.255.255");
}

TEST(HostCanon, QuoteForMessage) {
  EXPECT_EQ(quote_for_message("a.com"), "\"a.com\"");
  EXPECT_EQ(quote_for_message("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(quote_for_message("a\0b\n"s), "\"a\\u0000b\\u000a\"");
  EXPECT_EQ(quote_for_message("\xff"), "\"\\u00ff\"");
  const std::string q = quote_for_message(std::string(500, 'x'));
  EXPECT_LT(q.size(), 130u);
  EXPECT_EQ(q.substr(q.size() - 4), "...\"");
}

TEST(HostCanon, EmbeddingReachesHost) {
  EXPECT_TRUE(embedding_reaches_ipv4_host(E::kMapped));
  EXPECT_TRUE(embedding_reaches_ipv4_host(E::kCompatible));
  EXPECT_TRUE(embedding_reaches_ipv4_host(E::kNat64));
  EXPECT_FALSE(embedding_reaches_ipv4_host(E::k6to4));
  EXPECT_FALSE(embedding_reaches_ipv4_host(E::kTeredo));
  EXPECT_FALSE(embedding_reaches_ipv4_host(E::kNone));
}

}  // namespace
}  // namespace vigil::proxy
