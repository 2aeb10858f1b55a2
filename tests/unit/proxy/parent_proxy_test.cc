// network.parentProxy's pure parts: the URL and NO_PROXY grammar, which destinations go
// through the parent, the CONNECT request and the reading of the parent's answer.
#include "proxy/parent_proxy.h"

#include "proxy/host_canon.h"

#include <gtest/gtest.h>

namespace vigil::proxy {
namespace {

TEST(ParentProxyTest, Urls) {
  struct Row {
    const char* url;
    const char* want;  // "host:port", or the start of the error
    bool ok;
  };
  const Row rows[] = {
      {"http://127.0.0.1:3128", "127.0.0.1:3128", true},
      {"http://proxy.corp.example:8080/", "proxy.corp.example:8080", true},
      {"http://Proxy.Corp.Example", "proxy.corp.example:80", true},
      {"http://[::1]:3128", "[::1]:3128", true},
      {"https://proxy:3128", "TLS to the parent proxy is not supported", false},
      {"http://u:p@proxy:3128", "user:password in a proxy URL is not supported", false},
      {"socks5://proxy:1080", "expected \"http://host:port\"", false},
      {"http://proxy:3128/path", "a proxy URL has no path", false},
      {"http://proxy:0", "expected \"http://host:port\"", false},
      {"http://proxy:99999", "expected \"http://host:port\"", false},
      {"http://", "expected \"http://host:port\"", false},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.url);
    auto got = parse_proxy_url(r.url);
    ASSERT_EQ(got.ok(), r.ok) << (got.ok() ? got->text() : got.error().message);
    if (r.ok) {
      EXPECT_EQ(got->text(), r.want);
    } else {
      EXPECT_EQ(got.error().message.rfind(r.want, 0), 0u) << got.error().message;
    }
  }
}

TEST(ParentProxyTest, NoProxyTable) {
  auto list = parse_no_proxy(
      " localhost, .corp.example,*.internal ,10.0.0.0/8,192.168.1.5,"
      "git.example:22,");
  ASSERT_TRUE(list.ok()) << list.error().message;
  struct Row {
    const char* host;
    std::uint16_t port;
    bool direct;
  };
  const Row rows[] = {
      {"localhost", 80, true},         {"corp.example", 443, true}, {"a.b.corp.example", 443, true},
      {"notcorp.example", 443, false}, {"x.internal", 80, true},    {"10.2.3.4", 443, true},
      {"11.2.3.4", 443, false},        {"192.168.1.5", 80, true},   {"git.example", 22, true},
      {"git.example", 443, false},     {"github.com", 443, false},
  };
  for (const auto& r : rows)
    EXPECT_EQ(no_proxy_matches(*list, r.host, r.port), r.direct) << r.host << ":" << r.port;
  auto all = parse_no_proxy("*");
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(no_proxy_matches(*all, "anything.example", 443));
  EXPECT_FALSE(parse_no_proxy("bad host!").ok());
}

TEST(ParentProxyTest, RouteFallsBackBetweenHttpAndHttps) {
  ParentProxySettings s;
  EXPECT_FALSE(build_parent_route(s)->has_value()) << "nothing set: direct";
  s.http = "http://127.0.0.1:3128";
  s.no_proxy = "direct.example";
  s.origin = "network.parentProxy";
  auto r = build_parent_route(s);
  ASSERT_TRUE(r.ok() && r->has_value());
  const ParentRoute& route = **r;
  ASSERT_NE(route.via(NetProto::kConnect, "a.example", 443), nullptr);
  EXPECT_EQ(route.via(NetProto::kConnect, "a.example", 443)->text(), "127.0.0.1:3128");
  EXPECT_EQ(route.via(NetProto::kHttp, "a.example", 80)->text(), "127.0.0.1:3128");
  EXPECT_EQ(route.via(NetProto::kSocks5, "direct.example", 443), nullptr);
  s.https = "ftp://x";
  auto bad = build_parent_route(s);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "network.parentProxy.https: expected \"http://host:port\"");
}

TEST(ParentProxyTest, ConnectRequestAndReply) {
  EXPECT_EQ(connect_request("github.com", 443),
            "CONNECT github.com:443 HTTP/1.1\r\nHost: github.com:443\r\n\r\n");
  EXPECT_EQ(connect_request("2001:db8::1", 443),
            "CONNECT [2001:db8::1]:443 HTTP/1.1\r\nHost: [2001:db8::1]:443\r\n\r\n");
  EXPECT_EQ(*parse_connect_reply("HTTP/1.1 200 Connection established\r\n\r\n"), 200);
  EXPECT_EQ(*parse_connect_reply("HTTP/1.0 200\r\n\r\n"), 200);
  EXPECT_EQ(*parse_connect_reply("HTTP/1.1 407 Proxy Authentication Required\r\n\r\n"), 407);
  EXPECT_FALSE(parse_connect_reply("SSH-2.0-x\r\n\r\n").ok());
  EXPECT_FALSE(parse_connect_reply("HTTP/1.1 2000 x\r\n\r\n").ok());
  EXPECT_FALSE(parse_connect_reply("HTTP/1.1 20x ok\r\n\r\n").ok());
}

// network.mitmProxy: its domains, as allowedDomains spells them, pick the hosts that go
// to the user's proxy; none set, no route; a pattern that does not parse names its entry.
TEST(MitmRouteTest, ItsDomainsPickTheHostsAndABadPatternNamesItsEntry) {
  auto none = build_mitm_route(std::nullopt);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(*none);
  MitmProxySettings s{"/run/mitm.sock", {"api.example.com", "*.internal.org", "x.example.net:8443"}};
  auto r = build_mitm_route(s);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(*r);
  EXPECT_EQ((*r)->socket_path, "/run/mitm.sock");
  auto covers = [&](const char* host, std::uint16_t port) {
    auto h = canonicalize_host(host);
    return h.ok() && (*r)->covers(*h, port);
  };
  EXPECT_TRUE(covers("api.example.com", 443));
  EXPECT_TRUE(covers("API.Example.com.", 443));  // canonical spelling, as the allow list
  EXPECT_TRUE(covers("a.b.internal.org", 80));
  EXPECT_FALSE(covers("internal.org", 80));  // "*." is not the apex
  EXPECT_TRUE(covers("x.example.net", 8443));
  EXPECT_FALSE(covers("x.example.net", 443));
  EXPECT_FALSE(covers("example.com", 443));
  auto bad = build_mitm_route(MitmProxySettings{"/m.sock", {"ok.example.com", "bad..name"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("network.mitmProxy.domains[1]"), std::string::npos)
      << bad.error().message;
}

}  // namespace
}  // namespace vigil::proxy
