// What the relay to an external proxy reads from a client's first bytes, for the record:
// the target of an HTTP proxy request or of a SOCKS5 CONNECT, "incomplete" until the
// bytes that name it arrived, "unknown" for anything else (still passed on).
#include "proxy/relay_sniff.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vigil::proxy {
namespace {

using State = Sniffed::State;

TEST(RelaySniffTest, HttpRequestLines) {
  struct Row {
    std::string bytes;
    State state;
    NetProto proto;
    std::string host;
    std::uint16_t port;
  };
  const Row rows[] = {
      {"GET http://origin.test:8080/a HTTP/1.1\r\nHost: x\r\n\r\n", State::kFound, NetProto::kHttp,
       "origin.test", 8080},
      {"GET http://origin.test/ HTTP/1.1\r\n", State::kFound, NetProto::kHttp, "origin.test", 80},
      {"CONNECT example.com:443 HTTP/1.1\r\n", State::kFound, NetProto::kConnect, "example.com", 443},
      {"CONNECT [::1]:22 HTTP/1.1\n", State::kFound, NetProto::kConnect, "::1", 22},
      {"\r\nGET http://a.test/ HTTP/1.1\r\n", State::kFound, NetProto::kHttp, "a.test", 80},
      {"GET http://origin.te", State::kIncomplete, NetProto::kHttp, "", 0},
      {"", State::kIncomplete, NetProto::kHttp, "", 0},
      {"GET /origin-form HTTP/1.1\r\n", State::kUnknown, NetProto::kHttp, "", 0},
      {"CONNECT nohostport HTTP/1.1\r\n", State::kUnknown, NetProto::kConnect, "", 0},
      {"garbage\r\n", State::kUnknown, NetProto::kHttp, "", 0},
      {std::string(kMaxSniffBytes, 'x'), State::kUnknown, NetProto::kHttp, "", 0},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.bytes.substr(0, 60));
    const Sniffed s = sniff_http_target(r.bytes);
    EXPECT_EQ(s.state, r.state);
    if (r.state == State::kIncomplete) continue;
    EXPECT_EQ(s.proto, r.proto);
    EXPECT_EQ(s.host, r.host);
    EXPECT_EQ(s.port, r.port);
  }
}

TEST(RelaySniffTest, HostIsCapped) {
  std::string host;
  for (int i = 0; i < 8; ++i) host += std::string(50, 'a') + ".";
  host += "test";  // 412 bytes in labels of 50
  const Sniffed s = sniff_http_target("CONNECT " + host + ":443 HTTP/1.1\r\n");
  ASSERT_EQ(s.state, State::kFound);
  EXPECT_EQ(s.host.size(), 300u);
}

std::vector<std::uint8_t> bytes(std::initializer_list<int> v) {
  std::vector<std::uint8_t> out;
  for (int b : v) out.push_back(static_cast<std::uint8_t>(b));
  return out;
}

TEST(RelaySniffTest, Socks5) {
  // greeting (no auth) + CONNECT origin.test:8080
  auto domain = bytes({5, 1, 0, 5, 1, 0, 3, 11});
  for (char c : std::string("origin.test")) domain.push_back(static_cast<std::uint8_t>(c));
  domain.push_back(0x1f);
  domain.push_back(0x90);
  Sniffed s = sniff_socks5_target(domain);
  ASSERT_EQ(s.state, State::kFound);
  EXPECT_EQ(s.proto, NetProto::kSocks5);
  EXPECT_EQ(s.host, "origin.test");
  EXPECT_EQ(s.port, 8080);
  // Every prefix is incomplete, never a wrong answer.
  for (std::size_t n = 0; n < domain.size(); ++n) {
    SCOPED_TRACE(n);
    EXPECT_EQ(sniff_socks5_target(std::span(domain.data(), n)).state, State::kIncomplete);
  }
  // With a username/password exchange (RFC 1929) before the request; IPv4 target.
  auto auth = bytes({5, 1, 2, 1, 1, 'u', 2, 'p', 'w', 5, 1, 0, 1, 127, 0, 0, 1, 0, 80});
  s = sniff_socks5_target(auth);
  ASSERT_EQ(s.state, State::kFound);
  EXPECT_EQ(s.host, "127.0.0.1");
  EXPECT_EQ(s.port, 80);
  // Not SOCKS5, or a BIND: unknown (passed on, logged without a target).
  EXPECT_EQ(sniff_socks5_target(bytes({4, 1, 0, 80})).state, State::kUnknown);
  EXPECT_EQ(sniff_socks5_target(bytes({5, 1, 0, 5, 2, 0, 1, 1, 2, 3, 4, 0, 80})).state,
            State::kUnknown);
}

}  // namespace
}  // namespace vigil::proxy
