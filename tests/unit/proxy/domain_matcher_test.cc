// The allowlist decision as a table: (allowedDomains, deniedDomains, host, port) ->
// verdict and the entry that decided. The host column is what a client sent; it goes
// through canonicalize_host exactly as the proxy will.
#include "proxy/domain_matcher.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "proxy/domain_pattern.h"
#include "proxy/host_canon.h"

namespace vigil::proxy {
namespace {

using namespace std::string_literals;
using List = std::vector<std::string>;

constexpr NetVerdict A = NetVerdict::kAllowed;
constexpr NetVerdict D = NetVerdict::kDenied;

struct Row {
  List allowed;
  List denied;
  std::string host;
  std::uint16_t port;
  NetVerdict verdict;
  std::string rule;  // "" = nothing matched (default deny)
};

// Lists reused by many rows.
const List kGithub = {"github.com", "*.github.com", "*.githubusercontent.com"};
const List kMeta = {"169.254.169.254"};

// Each deny IPv6 spelling is on the allow list too, so only the IPv4 deny entry can
// refuse it: the rule column then proves that entry did.
const List kMetaV6Allowed = {"[::ffff:169.254.169.254]", "[64:ff9b::a9fe:a9fe]",
                             "[2002:a9fe:a9fe::1]", "[2001::5601:5601]", "[::169.254.169.254]"};

const std::vector<Row>& rows() {
  static const std::vector<Row> table = {
      // --- exact names ---------------------------------------------------------------
      {{"example.com"}, {}, "example.com", 443, A, "example.com"},
      {{"example.com"}, {}, "EXAMPLE.COM", 443, A, "example.com"},
      {{"example.com"}, {}, "Example.Com.", 80, A, "example.com"},
      {{"example.com"}, {}, "example.com", 1, A, "example.com"},
      {{"example.com"}, {}, "example.com", 65535, A, "example.com"},
      {{"example.com"}, {}, "www.example.com", 443, D, ""},
      {{"example.com"}, {}, "example.org", 443, D, ""},
      {{"example.com"}, {}, "notexample.com", 443, D, ""},
      {{"example.com"}, {}, "xexample.com", 443, D, ""},
      {{"example.com"}, {}, "example.com.evil.com", 443, D, ""},
      {{"example.com"}, {}, "example.co", 443, D, ""},
      {{"example.com"}, {}, "com", 443, D, ""},
      {{"Example.COM."}, {}, "example.com", 443, A, "Example.COM."},
      {{"example.com."}, {}, "EXAMPLE.com", 443, A, "example.com."},
      {{"localhost"}, {}, "localhost", 8080, A, "localhost"},
      {{"localhost"}, {}, "LOCALHOST.", 8080, A, "localhost"},
      {{"localhost"}, {}, "127.0.0.1", 8080, D, ""},
      {{"localhost"}, {}, "::1", 8080, D, ""},
      {{"_dmarc.example.com"}, {}, "_DMARC.example.com", 53, A, "_dmarc.example.com"},
      {{"xn--mnchen-3ya.de"}, {}, "XN--MNCHEN-3YA.DE", 443, A, "xn--mnchen-3ya.de"},
      {{"intranet"}, {}, "intranet", 80, A, "intranet"},
      {{"intranet"}, {}, "intranet.corp", 80, D, ""},
      {{}, {}, "example.com", 443, D, ""},
      {{}, {}, "127.0.0.1", 80, D, ""},

      // --- *.domain: any depth below, never the apex, never an IP --------------------
      {{"*.example.com"}, {}, "api.example.com", 443, A, "*.example.com"},
      {{"*.example.com"}, {}, "a.b.c.d.example.com", 443, A, "*.example.com"},
      {{"*.example.com"}, {}, "API.Example.Com.", 443, A, "*.example.com"},
      {{"*.example.com"}, {}, "_x.example.com", 443, A, "*.example.com"},
      {{"*.example.com"}, {}, "example.com", 443, D, ""},
      {{"*.example.com"}, {}, "badexample.com", 443, D, ""},
      {{"*.example.com"}, {}, "evil-example.com", 443, D, ""},
      {{"*.example.com"}, {}, "example.com.evil.org", 443, D, ""},
      {{"*.example.com"}, {}, "api.example.co", 443, D, ""},
      {{"*.example.com"}, {}, "api.example.com.au", 443, D, ""},
      {{"*.example.com"}, {}, "1.2.3.4", 443, D, ""},
      {{"*.example.com"}, {}, "::ffff:1.2.3.4", 443, D, ""},
      {{"*.Example.COM."}, {}, "a.example.com", 443, A, "*.Example.COM."},
      {{"*.example.com", "example.com"}, {}, "example.com", 443, A, "example.com"},
      {{"*.example.com", "example.com"}, {}, "www.example.com", 443, A, "*.example.com"},
      {{"example.com", "*.example.com"}, {}, "www.example.com", 443, A, "*.example.com"},
      {{"*.co.uk"}, {}, "shop.co.uk", 443, A, "*.co.uk"},
      {{"*.co.uk"}, {}, "co.uk", 443, D, ""},
      {{"*.nip.io"}, {}, "127.0.0.1.nip.io", 80, A, "*.nip.io"},  // a name; the address guard
                                                                  // judges its IP
      {{"*.a.b.example.com"}, {}, "x.a.b.example.com", 443, A, "*.a.b.example.com"},
      {{"*.a.b.example.com"}, {}, "a.b.example.com", 443, D, ""},
      {{"*.a.b.example.com"}, {}, "x.b.example.com", 443, D, ""},
      {kGithub, {}, "github.com", 443, A, "github.com"},
      {kGithub, {}, "api.github.com", 443, A, "*.github.com"},
      {kGithub, {}, "raw.githubusercontent.com", 443, A, "*.githubusercontent.com"},
      {kGithub, {}, "githubusercontent.com", 443, D, ""},
      {kGithub, {}, "github.io", 443, D, ""},
      {kGithub, {}, "gist.github.com.attacker.net", 443, D, ""},

      // --- one middle label -----------------------------------------------------------
      {{"bedrock.*.amazonaws.com"},
       {},
       "bedrock.us-east-1.amazonaws.com",
       443,
       A,
       "bedrock.*.amazonaws.com"},
      {{"bedrock.*.amazonaws.com"},
       {},
       "BEDROCK.EU-WEST-1.AMAZONAWS.COM.",
       443,
       A,
       "bedrock.*.amazonaws.com"},
      {{"bedrock.*.amazonaws.com"},
       {},
       "bedrock.x.amazonaws.com",
       443,
       A,
       "bedrock.*.amazonaws.com"},
      {{"bedrock.*.amazonaws.com"}, {}, "bedrock.amazonaws.com", 443, D, ""},
      {{"bedrock.*.amazonaws.com"}, {}, "bedrock.a.b.amazonaws.com", 443, D, ""},
      {{"bedrock.*.amazonaws.com"}, {}, "x.bedrock.us-east-1.amazonaws.com", 443, D, ""},
      {{"bedrock.*.amazonaws.com"}, {}, "bedrock-runtime.us-east-1.amazonaws.com", 443, D, ""},
      {{"bedrock.*.amazonaws.com"}, {}, "xbedrock.us-east-1.amazonaws.com", 443, D, ""},
      {{"bedrock.*.amazonaws.com"}, {}, "bedrock.us-east-1.amazonaws.com.evil.com", 443, D, ""},
      {{"bedrock.*.amazonaws.com"}, {}, "bedrock.us-east-1.amazonaws.co", 443, D, ""},
      {{"bedrock.*.amazonaws.com"}, {}, "bedrock.us-east-1.xamazonaws.com", 443, D, ""},
      {{"bedrock.*.amazonaws.com"}, {}, "bedrock..amazonaws.com", 443, D, "<error>"},
      {{"bedrock.*.amazonaws.com"}, {}, "s3.us-east-1.amazonaws.com", 443, D, ""},
      {{"a.b.*.example.com"}, {}, "a.b.c.example.com", 443, A, "a.b.*.example.com"},
      {{"a.b.*.example.com"}, {}, "b.c.example.com", 443, D, ""},
      {{"a.b.*.example.com"}, {}, "x.a.b.c.example.com", 443, D, ""},
      {{"a.b.*.example.com"}, {}, "a.x.c.example.com", 443, D, ""},
      {{"bedrock.*.amazonaws.com:443"},
       {},
       "bedrock.us-east-1.amazonaws.com",
       443,
       A,
       "bedrock.*.amazonaws.com:443"},
      {{"bedrock.*.amazonaws.com:443"}, {}, "bedrock.us-east-1.amazonaws.com", 80, D, ""},

      // --- ports ----------------------------------------------------------------------
      {{"example.com:443"}, {}, "example.com", 443, A, "example.com:443"},
      {{"example.com:443"}, {}, "example.com", 80, D, ""},
      {{"example.com:443"}, {}, "example.com", 8443, D, ""},
      {{"example.com:443"}, {}, "example.com", 44, D, ""},
      {{"example.com:443", "example.com:80"}, {}, "example.com", 80, A, "example.com:80"},
      {{"example.com:443", "example.com:80"}, {}, "example.com", 22, D, ""},
      {{"*.example.com:8443"}, {}, "a.example.com", 8443, A, "*.example.com:8443"},
      {{"*.example.com:8443"}, {}, "a.example.com", 443, D, ""},
      {{"example.com:1"}, {}, "example.com", 1, A, "example.com:1"},
      {{"example.com:65535"}, {}, "example.com", 65535, A, "example.com:65535"},
      {{"example.com:65535"}, {}, "example.com", 65534, D, ""},
      {{"example.com.:443"}, {}, "example.com", 443, A, "example.com.:443"},

      // --- deniedDomains win ----------------------------------------------------------
      {kGithub, {"gist.github.com"}, "gist.github.com", 443, D, "gist.github.com"},
      {kGithub, {"gist.github.com"}, "api.github.com", 443, A, "*.github.com"},
      {kGithub, {"gist.github.com"}, "a.gist.github.com", 443, A, "*.github.com"},
      {kGithub, {"*.gist.github.com"}, "a.gist.github.com", 443, D, "*.gist.github.com"},
      {kGithub, {"*.gist.github.com"}, "gist.github.com", 443, A, "*.github.com"},
      {kGithub, {"github.com:22"}, "github.com", 22, D, "github.com:22"},
      {kGithub, {"github.com:22"}, "github.com", 443, A, "github.com"},
      {kGithub, {"github.com:22"}, "ssh.github.com", 22, A, "*.github.com"},
      {kGithub, {"*.github.com:22", "github.com:22"}, "ssh.github.com", 22, D, "*.github.com:22"},
      {kGithub, {"GitHub.COM."}, "github.com", 443, D, "GitHub.COM."},
      {{"example.com"}, {"*"}, "example.com", 443, D, "*"},
      {{"example.com"}, {"*"}, "1.2.3.4", 443, D, "*"},
      {{"example.com"}, {"*"}, "::1", 443, D, "*"},
      {{"example.com", "*.example.com"}, {"*:22"}, "example.com", 22, D, "*:22"},
      {{"example.com", "*.example.com"}, {"*:22"}, "example.com", 443, A, "example.com"},
      {{"example.com", "*.example.com"}, {"*:22"}, "git.example.com", 22, D, "*:22"},
      {{"example.com", "*.example.com"}, {"*:22"}, "1.2.3.4", 22, D, "*:22"},
      {{"example.com", "*.example.com"}, {"*:22"}, "1.2.3.4", 443, D, ""},
      {{"*.example.com"},
       {"*.internal.example.com"},
       "db.internal.example.com",
       5432,
       D,
       "*.internal.example.com"},
      {{"*.example.com"},
       {"*.internal.example.com"},
       "internal.example.com",
       443,
       A,
       "*.example.com"},
      {{"*.example.com"},
       {"bedrock.*.example.com"},
       "bedrock.x.example.com",
       443,
       D,
       "bedrock.*.example.com"},
      {{"*.example.com"},
       {"bedrock.*.example.com"},
       "bedrock.example.com",
       443,
       A,
       "*.example.com"},
      {{"example.com"}, {"example.com"}, "example.com", 443, D, "example.com"},
      {{"example.com"}, {"example.com:443"}, "example.com", 80, A, "example.com"},
      {{"example.com"}, {"other.com", "example.com"}, "example.com", 443, D, "example.com"},
      {{"example.com"}, {"*.example.com"}, "example.com", 443, A, "example.com"},

      // --- IPv4 entries: every spelling of the host is the same address ------------
      {{"127.0.0.1"}, {}, "127.0.0.1", 80, A, "127.0.0.1"},
      {{"127.0.0.1"}, {}, "127.1", 80, A, "127.0.0.1"},
      {{"127.0.0.1"}, {}, "127.0.1", 80, A, "127.0.0.1"},
      {{"127.0.0.1"}, {}, "0x7f.1", 80, A, "127.0.0.1"},
      {{"127.0.0.1"}, {}, "0x7f.0.0.1", 80, A, "127.0.0.1"},
      {{"127.0.0.1"}, {}, "0x7f000001", 80, A, "127.0.0.1"},
      {{"127.0.0.1"}, {}, "2130706433", 80, A, "127.0.0.1"},
      {{"127.0.0.1"}, {}, "017700000001", 80, A, "127.0.0.1"},
      {{"127.0.0.1"}, {}, "0177.0.0.1", 80, A, "127.0.0.1"},
      {{"127.0.0.1"}, {}, "127.0.0.1.", 80, A, "127.0.0.1"},
      {{"127.0.0.1"}, {}, "::ffff:127.0.0.1", 80, A, "127.0.0.1"},
      {{"127.0.0.1"}, {}, "[::ffff:7f00:1]", 80, A, "127.0.0.1"},
      {{"127.0.0.1"}, {}, "::127.0.0.1", 80, A, "127.0.0.1"},
      {{"127.0.0.1"}, {}, "64:ff9b::7f00:1", 80, A, "127.0.0.1"},
      // A tunnel only passes through the IPv4 address: allowing it does not allow them.
      {{"127.0.0.1"}, {}, "2002:7f00:1::1", 80, D, ""},
      {{"127.0.0.1"}, {}, "2001:0:1:2:3:4:80ff:fffe", 80, D, ""},
      {{"127.0.0.1"}, {}, "127.0.0.2", 80, D, ""},
      {{"127.0.0.1"}, {}, "::1", 80, D, ""},
      {{"127.0.0.1"}, {}, "localhost", 80, D, ""},
      {{"127.0.0.1"}, {}, "127.0.0.1.nip.io", 80, D, ""},
      {{"127.1"}, {}, "127.0.0.1", 80, A, "127.1"},
      {{"2130706433"}, {}, "0x7f.1", 80, A, "2130706433"},
      {{"0x7f.0.0.1:8080"}, {}, "127.0.0.1", 8080, A, "0x7f.0.0.1:8080"},
      {{"0x7f.0.0.1:8080"}, {}, "127.0.0.1", 80, D, ""},
      {{"10.0.0.0"}, {}, "10.0.0.1", 80, D, ""},
      {{"10.1.2.3"}, {}, "10.1.2.3", 80, A, "10.1.2.3"},
      {{"10.1.2.3"}, {}, "10.66051", 80, A, "10.1.2.3"},

      // --- deny an IPv4 address: all its spellings, tunnels included -----------------
      {{"169.254.169.254"}, kMeta, "169.254.169.254", 80, D, "169.254.169.254"},
      {{}, kMeta, "169.254.169.254", 80, D, "169.254.169.254"},
      {{}, kMeta, "0xa9fea9fe", 80, D, "169.254.169.254"},
      {{}, kMeta, "2852039166", 80, D, "169.254.169.254"},
      {{}, kMeta, "0251.0376.0251.0376", 80, D, "169.254.169.254"},
      {{}, kMeta, "169.16689662", 80, D, "169.254.169.254"},
      {{}, kMeta, "169.254.43518", 80, D, "169.254.169.254"},
      {{}, kMeta, "025177524776", 80, D, "169.254.169.254"},
      {{}, kMeta, "169.254.169.253", 80, D, ""},
      {kMetaV6Allowed, kMeta, "::ffff:169.254.169.254", 80, D, "169.254.169.254"},
      {kMetaV6Allowed, kMeta, "[::ffff:a9fe:a9fe]", 80, D, "169.254.169.254"},
      {kMetaV6Allowed, kMeta, "64:ff9b::a9fe:a9fe", 80, D, "169.254.169.254"},
      {kMetaV6Allowed, kMeta, "64:ff9b::169.254.169.254", 80, D, "169.254.169.254"},
      {kMetaV6Allowed, kMeta, "2002:a9fe:a9fe::1", 80, D, "169.254.169.254"},
      {kMetaV6Allowed, kMeta, "2001::5601:5601", 80, D, "169.254.169.254"},
      {kMetaV6Allowed, kMeta, "::169.254.169.254", 80, D, "169.254.169.254"},
      // Without the deny entry the same hosts are allowed: the deny entry above decided.
      {kMetaV6Allowed, {}, "::ffff:169.254.169.254", 80, A, "[::ffff:169.254.169.254]"},
      {kMetaV6Allowed, {}, "2002:a9fe:a9fe::1", 80, A, "[2002:a9fe:a9fe::1]"},
      {kMetaV6Allowed, {}, "2001::5601:5601", 80, A, "[2001::5601:5601]"},
      // A v4-mapped entry is the IPv4 address itself, on either list.
      {kMetaV6Allowed, {}, "169.254.169.254", 80, A, "[::ffff:169.254.169.254]"},
      {{}, {"[::ffff:169.254.169.254]"}, "169.254.169.254", 80, D, "[::ffff:169.254.169.254]"},
      {{}, {"[::ffff:169.254.169.254]"}, "0xa9fea9fe", 80, D, "[::ffff:169.254.169.254]"},
      {{}, {"[::ffff:169.254.169.254]"}, "2002:a9fe:a9fe::", 80, D, "[::ffff:169.254.169.254]"},
      {{"169.254.169.254"}, {"169.254.169.254:80"}, "169.254.169.254", 80, D, "169.254.169.254:80"},
      {{"169.254.169.254"}, {"169.254.169.254:80"}, "0xa9fea9fe", 443, A, "169.254.169.254"},
      {{"169.254.169.254"},
       {"169.254.169.254:80"},
       "::ffff:169.254.169.254",
       443,
       A,
       "169.254.169.254"},
      {{}, {"0xa9fea9fe"}, "169.254.169.254", 80, D, "0xa9fea9fe"},

      // --- IPv6 entries -------------------------------------------------------------
      {{"[::1]"}, {}, "::1", 80, A, "[::1]"},
      {{"[::1]"}, {}, "[::1]", 80, A, "[::1]"},
      {{"[::1]"}, {}, "0:0:0:0:0:0:0:1", 80, A, "[::1]"},
      {{"[::1]"}, {}, "127.0.0.1", 80, D, ""},
      {{"[::1]"}, {}, "::2", 80, D, ""},
      {{"[::1]"}, {}, "localhost", 80, D, ""},
      {{"[0:0::1]:8080"}, {}, "::1", 8080, A, "[0:0::1]:8080"},
      {{"[0:0::1]:8080"}, {}, "::1", 80, D, ""},
      {{"[2001:DB8::1]"}, {}, "2001:db8:0:0:0:0:0:1", 443, A, "[2001:DB8::1]"},
      {{"[2001:db8::1]"}, {}, "2001:db8::2", 443, D, ""},
      {{"[::ffff:10.0.0.1]"}, {}, "10.0.0.1", 80, A, "[::ffff:10.0.0.1]"},
      {{"[::ffff:10.0.0.1]"}, {}, "::ffff:a00:1", 80, A, "[::ffff:10.0.0.1]"},
      {{"[64:ff9b::10.0.0.1]"}, {}, "10.0.0.1", 80, A, "[64:ff9b::10.0.0.1]"},
      {{"[2002:a00:1::]"}, {}, "10.0.0.1", 80, D, ""},
      {{"[fd00:ec2::254]"}, {"[FD00:EC2::254]"}, "fd00:ec2::254", 80, D, "[FD00:EC2::254]"},
      {{"[fd00:ec2::254]"},
       {"[FD00:EC2::254]"},
       "fd00:ec2:0:0:0:0:0:254",
       80,
       D,
       "[FD00:EC2::254]"},
      {{"[fd00:ec2::254]"}, {}, "[FD00:ec2::0254]", 80, A, "[fd00:ec2::254]"},
      {{"[fd00:ec2::254]"}, {}, "fd00:ec2::255", 80, D, ""},

      // --- names never match IP entries and IPs never match name entries -------------
      {{"1.2.3.4.example.com"}, {}, "1.2.3.4", 443, D, ""},
      {{"*.example.com"}, {}, "::1", 443, D, ""},
      {{"bedrock.*.amazonaws.com"}, {}, "169.254.169.254", 443, D, ""},
      {{}, {"*.example.com"}, "1.2.3.4", 443, D, ""},
  };
  return table;
}

std::string describe(const Row& r) {
  auto join = [](const List& l) {
    std::string s = "[";
    for (const auto& e : l) s += (s.size() > 1 ? ", " : "") + quote_for_message(e);
    return s + "]";
  };
  return "allowed=" + join(r.allowed) + " denied=" + join(r.denied) +
         " host=" + quote_for_message(r.host) + " port=" + std::to_string(r.port);
}

TEST(DomainMatcher, Table) {
  ASSERT_GE(rows().size(), 150u);
  int allows = 0;
  int denies_by_rule = 0;
  for (const auto& r : rows()) {
    SCOPED_TRACE(describe(r));
    const auto m = DomainMatcher::build(r.allowed, r.denied, {});
    ASSERT_TRUE(m.ok()) << m.error().message;
    const auto host = canonicalize_host(r.host);
    if (r.rule == "<error>") {
      // A malformed host never reaches the matcher: the proxy refuses it first.
      EXPECT_FALSE(host.ok());
      continue;
    }
    ASSERT_TRUE(host.ok()) << host.error().message;
    const Decision d = m->decide(*host, r.port);
    EXPECT_EQ(d.verdict, r.verdict);
    EXPECT_EQ(d.rule, r.rule);
    allows += d.verdict == NetVerdict::kAllowed;
    denies_by_rule += d.verdict == NetVerdict::kDenied && !d.rule.empty();
  }
  // The table exercises all three outcomes in volume.
  EXPECT_GE(allows, 50);
  EXPECT_GE(denies_by_rule, 30);
}

TEST(DomainMatcher, Reasons) {
  const auto m = DomainMatcher::build(
      {"github.com", "*.github.com"}, {"github.com:22", "gist.github.com"},
      {{"github.com:22", "SSH pushes to GitHub are blocked; use an https:// remote"}});
  ASSERT_TRUE(m.ok()) << m.error().message;
  const auto gh = *canonicalize_host("github.com");

  const Decision ssh = m->decide(gh, 22);
  EXPECT_EQ(ssh.verdict, NetVerdict::kDenied);
  EXPECT_EQ(ssh.rule, "github.com:22");
  EXPECT_EQ(ssh.reason, "SSH pushes to GitHub are blocked; use an https:// remote");

  const Decision gist = m->decide(*canonicalize_host("gist.github.com"), 443);
  EXPECT_EQ(gist.verdict, NetVerdict::kDenied);
  EXPECT_EQ(gist.reason, "denied by network.deniedDomains entry \"gist.github.com\"");

  const Decision https = m->decide(gh, 443);
  EXPECT_EQ(https.verdict, NetVerdict::kAllowed);
  EXPECT_EQ(https.rule, "github.com");
  EXPECT_EQ(https.reason, "allowed by network.allowedDomains entry \"github.com\"");

  const Decision other = m->decide(*canonicalize_host("example.com"), 443);
  EXPECT_EQ(other.verdict, NetVerdict::kDenied);
  EXPECT_EQ(other.rule, "");
  EXPECT_EQ(other.reason, "host is not on the allow list");
}

TEST(DomainMatcher, ReasonOnDenyAll) {
  const auto m = DomainMatcher::build({}, {"*"}, {{"*", "no network in this project"}});
  ASSERT_TRUE(m.ok()) << m.error().message;
  const Decision d = m->decide(*canonicalize_host("example.com"), 443);
  EXPECT_EQ(d.rule, "*");
  EXPECT_EQ(d.reason, "no network in this project");
}

TEST(DomainMatcher, BuildFromNetworkPolicy) {
  NetworkPolicy net;
  net.allowed_domains = {"*.npmjs.org"};
  net.denied_domains = {"evil.npmjs.org"};
  net.denied_domain_reasons = {{"evil.npmjs.org", "use the mirror"}};
  const auto m = DomainMatcher::build(net);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->decide(*canonicalize_host("registry.npmjs.org"), 443).verdict, NetVerdict::kAllowed);
  EXPECT_EQ(m->decide(*canonicalize_host("evil.npmjs.org"), 443).reason, "use the mirror");
  EXPECT_EQ(m->allowed().size(), 1u);
  EXPECT_EQ(m->denied().size(), 1u);
}

// --- invalid entries -------------------------------------------------------------------

TEST(DomainMatcher, ErrorNamesTheFirstBadEntryWithItsPath) {
  const auto m = DomainMatcher::build({"a.com", "b.com", "c.com", "*.com", "*"}, {"**"}, {});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, Errc::kInvalidPolicy);
  EXPECT_EQ(m.error().message,
            "network.allowedDomains[3]: \"*.com\": a wildcard must cover at least two labels "
            "(write *.example.com)");
}

TEST(DomainMatcher, DeniedErrorsAfterAllowedOnes) {
  const auto m = DomainMatcher::build({"a.com"}, {"x.com", "*.*.x.com"}, {});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message,
            "network.deniedDomains[1]: \"*.*.x.com\": only one wildcard label is allowed");
}

struct BadEntry {
  PatternList list;
  std::string entry;
  std::string fragment;
};

const std::vector<BadEntry>& bad_entries() {
  constexpr PatternList kA = PatternList::kAllowed;
  constexpr PatternList kD = PatternList::kDenied;
  static const std::vector<BadEntry> table = {
      {kA, "*", "a bare * (every host) is only accepted in network.deniedDomains"},
      {kA, "*:443", "a bare * (every host) is only accepted in network.deniedDomains"},
      {kA, "*.com", "a wildcard must cover at least two labels (write *.example.com)"},
      {kA, "*.com.", "a wildcard must cover at least two labels"},
      {kA, "*.", "a wildcard must cover at least two labels"},
      {kA, "*.com:443", "a wildcard must cover at least two labels"},
      {kD, "*.com", "a wildcard must cover at least two labels"},
      {kA, "**.x.com", "a wildcard must be a whole label"},
      {kD, "**", "a wildcard must be a whole label"},
      {kA, "a*.x.com", "a wildcard must be a whole label"},
      {kA, "*a.x.com", "a wildcard must be a whole label"},
      {kA, "x.*a.example.com", "a wildcard must be a whole label"},
      {kA, "*.*.x.com", "only one wildcard label is allowed"},
      {kA, "a.*.*.x.com", "only one wildcard label is allowed"},
      {kA, "bedrock.*.*.amazonaws.com", "only one wildcard label is allowed"},
      {kD, "*.*", "only one wildcard label is allowed"},
      {kA, "bedrock.*.com", "a wildcard needs at least two labels after it"},
      {kA, "example.*", "a wildcard needs at least two labels after it"},
      {kA, "*.1.2.3", "a wildcard cannot cover an IP address"},
      {kA, "a.*.1.2", "a wildcard cannot cover an IP address"},
      {kA, "*.example.0x7f", "a wildcard cannot cover an IP address"},
      {kA, "*..example.com", "empty label"},
      {kA, "*.exa!mple.com", "invalid character"},
      {kA, "https://x.com", "is a URL; write only the host"},
      {kA, "http://x.com:80", "is a URL"},
      {kD, "ssh://github.com", "is a URL"},
      {kA, "x.com/path", "contains a path; write only the host"},
      {kA, "x.com/", "contains a path"},
      {kA, "", "empty entry"},
      {kD, "", "empty entry"},
      {kA, " x.com", "contains whitespace"},
      {kA, "x.com ", "contains whitespace"},
      {kA, "x .com", "contains whitespace"},
      {kA, "x.com\n", "contains whitespace"},
      {kA, "x.com:0", "port \"0\" is out of range (1-65535)"},
      {kD, "*:0", "port \"0\" is out of range"},
      {kA, "x.com:65536", "port \"65536\" is out of range"},
      {kA, "x.com:99999999", "is out of range"},
      {kA, "x.com:http", "port \"http\" is not a number"},
      {kD, "*:ssh", "is not a number"},
      {kA, "x.com:-1", "is not a number"},
      {kA, "x.com:+443", "is not a number"},
      {kA, "x.com:0443", "has a leading zero"},
      {kA, "x.com:", "empty port after ':'"},
      {kA, ":443", "empty host before ':'"},
      {kA, "x.com:443:80", "more than one ':'"},
      {kA, "2001:db8::1", "write an IPv6 address in brackets"},
      {kD, "::1", "write an IPv6 address in brackets"},
      {kA, "[::1", "'[' without a matching ']'"},
      {kA, "[::1]x", "unexpected text after ']'"},
      {kA, "[::1]:0", "out of range"},
      {kA, "[::1]:", "empty port"},
      {kA, "[127.0.0.1]", "brackets are only for IPv6"},
      {kA, "[example.com]:443", "brackets are only for IPv6"},
      {kA, "[fe80::1%eth0]", "zone ids"},
      {kA, "[::ffff:1.2.3.256]", "not a valid IPv6"},
      {kA, "256.1.1.1", "not a valid IPv4"},
      {kA, "1.2.3.4.5", "not a valid IPv4"},
      {kA, "08.0.0.1", "not a valid IPv4"},
      {kA, ".example.com", "a leading dot is not a wildcard; write *.example.com"},
      {kA, "a..b.com", "empty label"},
      {kA, "x.com..", "empty label"},
      {kA, "user@x.com", "'@'"},
      {kA, "m\xc3\xbcnchen.de", "non-ASCII"},
      {kA, "x.com\0.y.com"s, "NUL"},
      {kA, "exa!mple.com", "invalid character"},
      {kA, "exa%mple.com", "'%'"},
      {kA, std::string(64, 'a') + ".com", "longer than 63"},
      {kA,
       "*." + std::string(63, 'a') + "." + std::string(63, 'b') + "." + std::string(63, 'c') + "." +
           std::string(62, 'd'),
       "longer than 253"},
  };
  return table;
}

TEST(DomainMatcher, InvalidEntries) {
  for (const auto& b : bad_entries()) {
    SCOPED_TRACE(quote_for_message(b.entry));
    // The bad entry is the second of its list, so its path is [1].
    const List list = {"fine.example.com", b.entry};
    const bool allowed = b.list == PatternList::kAllowed;
    const auto m = DomainMatcher::build(allowed ? list : List{}, allowed ? List{} : list, {});
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.error().code, Errc::kInvalidPolicy);
    const std::string path = allowed ? "network.allowedDomains[1]: " : "network.deniedDomains[1]: ";
    const std::string& msg = m.error().message;
    EXPECT_EQ(msg.rfind(path + quote_for_message(b.entry) + ": ", 0), 0u) << msg;
    EXPECT_NE(msg.find(b.fragment), std::string::npos) << msg;
  }
}

TEST(DomainMatcher, UnknownReasonKeyIsAnError) {
  const auto typo = DomainMatcher::build({}, {"github.com:22"}, {{"GitHub.com:22", "use https"}});
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(
      typo.error().message,
      "network.deniedDomainReasons[\"GitHub.com:22\"]: no network.deniedDomains entry is spelled "
      "\"GitHub.com:22\" (keys must match an entry exactly; did you mean \"github.com:22\"?)");

  const auto stray = DomainMatcher::build({}, {"github.com"}, {{"gitlab.com", "x"}});
  ASSERT_FALSE(stray.ok());
  EXPECT_EQ(
      stray.error().message,
      "network.deniedDomainReasons[\"gitlab.com\"]: no network.deniedDomains entry is spelled "
      "\"gitlab.com\" (keys must match an entry exactly)");

  // A key naming an allowedDomains entry is still not a deniedDomains entry.
  EXPECT_FALSE(DomainMatcher::build({"gitlab.com"}, {}, {{"gitlab.com", "x"}}).ok());
}

TEST(DomainMatcher, ReasonTextMustBeOnePrintableLine) {
  const auto empty = DomainMatcher::build({}, {"x.com"}, {{"x.com", ""}});
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().message, "network.deniedDomainReasons[\"x.com\"]: the reason is empty");

  const auto forged =
      DomainMatcher::build({}, {"x.com"}, {{"x.com", "ok\ndeny network-outbound evil"}});
  ASSERT_FALSE(forged.ok());
  EXPECT_NE(forged.error().message.find("one line without control characters"), std::string::npos);

  EXPECT_FALSE(DomainMatcher::build({}, {"x.com"}, {{"x.com", "a\x1b[31mred"}}).ok());
  EXPECT_TRUE(
      DomainMatcher::build({}, {"x.com"}, {{"x.com", "use the internal mirror — see wiki"}}).ok());
}

// --- the parsed form ------------------------------------------------------------------

struct Canon {
  PatternList list;
  std::string entry;
  std::string canonical;
  DomainPattern::Kind kind;
};

TEST(DomainPattern, CanonicalForms) {
  using K = DomainPattern::Kind;
  constexpr PatternList kA = PatternList::kAllowed;
  constexpr PatternList kD = PatternList::kDenied;
  const std::vector<Canon> table = {
      {kA, "Example.COM.", "example.com", K::kExact},
      {kA, "example.com:443", "example.com:443", K::kExact},
      {kA, "example.com.:443", "example.com:443", K::kExact},
      {kA, "*.Example.com", "*.example.com", K::kAnySubdomain},
      {kA, "*.example.com.:8443", "*.example.com:8443", K::kAnySubdomain},
      {kA, "BEDROCK.*.AmazonAWS.com", "bedrock.*.amazonaws.com", K::kMiddleLabel},
      {kA, "a.B.*.example.com:1", "a.b.*.example.com:1", K::kMiddleLabel},
      {kA, "0x7f.1:8080", "127.0.0.1:8080", K::kIp},
      {kA, "2130706433", "127.0.0.1", K::kIp},
      {kA, "[0:0::1]:443", "[::1]:443", K::kIp},
      {kA, "[::FFFF:7f00:1]", "[::ffff:127.0.0.1]", K::kIp},
      {kA, "localhost", "localhost", K::kExact},
      {kD, "*", "*", K::kAll},
      {kD, "*:22", "*:22", K::kAll},
      {kD, "*.example.com", "*.example.com", K::kAnySubdomain},
  };
  for (const auto& c : table) {
    SCOPED_TRACE(c.entry);
    const auto p = parse_domain_pattern(c.entry, c.list);
    ASSERT_TRUE(p.ok()) << p.error().message;
    EXPECT_EQ(p->canonical(), c.canonical);
    EXPECT_EQ(p->kind, c.kind);
    EXPECT_EQ(p->entry, c.entry);
    // The canonical spelling parses back to itself.
    const auto again = parse_domain_pattern(p->canonical(), c.list);
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(again->canonical(), c.canonical);
  }
}

}  // namespace
}  // namespace vigil::proxy
