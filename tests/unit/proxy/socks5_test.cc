// The SOCKS5 handshake parsers and replies, as byte tables.
#include "proxy/socks5.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vigil::proxy::socks5 {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes with_name(const std::string& name, std::uint16_t port) {
  Bytes b = {5, 1, 0, 3, static_cast<std::uint8_t>(name.size())};
  // A loop, not insert(): GCC 12 -O2 reports a false array-bounds error on the insert.
  for (const char c : name) b.push_back(static_cast<std::uint8_t>(c));
  b.push_back(static_cast<std::uint8_t>(port >> 8));
  b.push_back(static_cast<std::uint8_t>(port & 0xFF));
  return b;
}

TEST(Socks5, Greeting) {
  struct Row {
    Bytes in;
    ParseState state;
    bool no_auth;
    std::size_t size;
  };
  const std::vector<Row> rows = {
      {{5, 1, 0}, ParseState::kComplete, true, 3},
      {{5, 2, 2, 0}, ParseState::kComplete, true, 4},
      {{5, 1, 2}, ParseState::kComplete, false, 3},  // username/password only
      {{5, 3, 1, 2, 0x80, 9}, ParseState::kComplete, false, 5},
      {{5, 1, 0, 5, 1, 0}, ParseState::kComplete, true, 3},  // request follows
      {{}, ParseState::kIncomplete, false, 0},
      {{5}, ParseState::kIncomplete, false, 0},
      {{5, 2, 0}, ParseState::kIncomplete, false, 0},
      {{5, 0}, ParseState::kError, false, 0},
      {{4, 1, 0}, ParseState::kError, false, 0},
      {{'G', 'E', 'T'}, ParseState::kError, false, 0},
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE(i);
    const auto g = parse_greeting(rows[i].in);
    ASSERT_EQ(g.state, rows[i].state);
    if (g.state == ParseState::kComplete) {
      EXPECT_EQ(g.offers_no_auth, rows[i].no_auth);
      EXPECT_EQ(g.size, rows[i].size);
    }
  }
  EXPECT_EQ(method_reply(true), (std::array<std::uint8_t, 2>{5, 0}));
  EXPECT_EQ(method_reply(false), (std::array<std::uint8_t, 2>{5, 0xFF}));
}

TEST(Socks5, Request) {
  using T = Request::AddressType;
  struct Row {
    Bytes in;
    ParseState state;
    T type;
    std::string host;
    std::uint16_t port;
    Reply reply;  // kError
  };
  Bytes v6 = {5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0x1F, 0x90};
  Bytes mapped = {5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 127, 0, 0, 1, 0, 80};
  const std::vector<Row> rows = {
      {{5, 1, 0, 1, 127, 0, 0, 1, 0, 80},
       ParseState::kComplete,
       T::kIPv4,
       "127.0.0.1",
       80,
       Reply::kSucceeded},
      {{5, 1, 0, 1, 169, 254, 169, 254, 1, 187},
       ParseState::kComplete,
       T::kIPv4,
       "169.254.169.254",
       443,
       Reply::kSucceeded},
      {v6, ParseState::kComplete, T::kIPv6, "::1", 8080, Reply::kSucceeded},
      {mapped, ParseState::kComplete, T::kIPv6, "::ffff:127.0.0.1", 80, Reply::kSucceeded},
      {with_name("example.com", 443), ParseState::kComplete, T::kDomain, "example.com", 443,
       Reply::kSucceeded},
      {with_name("", 443), ParseState::kComplete, T::kDomain, "", 443,
       Reply::kSucceeded},  // judged later
      {with_name(std::string(255, 'a'), 1), ParseState::kComplete, T::kDomain,
       std::string(255, 'a'), 1, Reply::kSucceeded},
      {{5, 1, 0, 1, 127, 0, 0, 1, 0}, ParseState::kIncomplete, T::kIPv4, "", 0, Reply::kSucceeded},
      {{5, 1, 0, 3}, ParseState::kIncomplete, T::kDomain, "", 0, Reply::kSucceeded},
      {{5, 1, 0, 3, 5, 'a'}, ParseState::kIncomplete, T::kDomain, "", 0, Reply::kSucceeded},
      {{5, 1}, ParseState::kIncomplete, T::kDomain, "", 0, Reply::kSucceeded},
      {{4}, ParseState::kError, T::kDomain, "", 0, Reply::kGeneralFailure},
      {{5, 2, 0, 1, 127, 0, 0, 1, 0, 80},
       ParseState::kError,
       T::kDomain,
       "",
       0,
       Reply::kCommandNotSupported},
      {{5, 3, 0, 1, 127, 0, 0, 1, 0, 80},
       ParseState::kError,
       T::kDomain,
       "",
       0,
       Reply::kCommandNotSupported},
      {{5, 1, 1, 1, 127, 0, 0, 1, 0, 80},
       ParseState::kError,
       T::kDomain,
       "",
       0,
       Reply::kGeneralFailure},
      {{5, 1, 0, 2, 127, 0, 0, 1, 0, 80},
       ParseState::kError,
       T::kDomain,
       "",
       0,
       Reply::kAddressTypeNotSupported},
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE(i);
    const auto& r = rows[i];
    const auto p = parse_request(r.in);
    ASSERT_EQ(p.state, r.state) << p.error;
    if (p.state == ParseState::kComplete) {
      EXPECT_EQ(p.type, r.type);
      EXPECT_EQ(p.host, r.host);
      EXPECT_EQ(p.port, r.port);
      EXPECT_EQ(p.size, r.in.size());
    }
    if (p.state == ParseState::kError) {
      EXPECT_EQ(p.reply, r.reply);
    }
  }
}

TEST(Socks5, Replies) {
  EXPECT_EQ(reply(Reply::kNotAllowed),
            (std::array<std::uint8_t, 10>{5, 2, 0, 1, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(reply(Reply::kSucceeded)[1], 0);
  EXPECT_EQ(socks4_rejection(), (std::array<std::uint8_t, 8>{0, 91, 0, 0, 0, 0, 0, 0}));
}

}  // namespace
}  // namespace vigil::proxy::socks5
