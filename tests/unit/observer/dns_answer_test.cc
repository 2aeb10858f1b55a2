// The DNS stub's parser and answers (observer/dns_answer.h), on hand-made packets: good
// queries, and every hostile shape a command can send to 127.0.0.1:53.
#include "observer/dns_answer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <string>

namespace vigil::init {
namespace {

// A query: id 0x1234, RD, one question.
std::string query(const std::string& name, std::uint16_t type, std::uint16_t klass = 1,
                  std::uint8_t flags = 0x01) {
  std::string q = {'\x12', '\x34', static_cast<char>(flags), '\x00', '\x00', '\x01',
                   '\x00', '\x00', '\x00', '\x00', '\x00', '\x00'};
  std::size_t start = 0;
  while (start <= name.size() && !name.empty()) {
    const std::size_t dot = std::min(name.find('.', start), name.size());
    q.push_back(static_cast<char>(dot - start));
    q += name.substr(start, dot - start);
    start = dot + 1;
  }
  q.push_back('\0');
  q.push_back(static_cast<char>(type >> 8));
  q.push_back(static_cast<char>(type & 0xff));
  q.push_back(static_cast<char>(klass >> 8));
  q.push_back(static_cast<char>(klass & 0xff));
  return q;
}

int rcode(const std::string& a) { return static_cast<std::uint8_t>(a[3]) & 0x0f; }
int answers(const std::string& a) { return (static_cast<std::uint8_t>(a[6]) << 8) | static_cast<std::uint8_t>(a[7]); }

TEST(DnsAnswer, AGetsOneFakeAddressPerNameKeptForTheSession) {
  FakeNames names;
  auto a = dns_answer(query("Allowed.Test", 1), names);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->substr(0, 2), "\x12\x34");
  EXPECT_EQ(static_cast<std::uint8_t>((*a)[2]) & 0x80, 0x80);  // a response
  EXPECT_EQ(rcode(*a), dns_rcode::kNoError);
  EXPECT_EQ(answers(*a), 1);
  const std::string addr = a->substr(a->size() - 4);
  EXPECT_EQ(addr, std::string("\xc6\x12\x00\x01", 4));  // 198.18.0.1
  EXPECT_EQ(names.name_of(0xC6120001), "allowed.test");
  // Asked again (any case): the same address; another name: the next one.
  EXPECT_EQ(dns_answer(query("allowed.test", 1), names)->substr(a->size() - 4), addr);
  auto b = dns_answer(query("other.test", 1), names);
  EXPECT_EQ(b->substr(b->size() - 4), std::string("\xc6\x12\x00\x02", 4));
}

TEST(DnsAnswer, AaaaIsTheSameNumberUnderTheLocalUsePrefix) {
  FakeNames names;
  auto a = dns_answer(query("v6.test", 28), names);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(answers(*a), 1);
  const std::string addr = a->substr(a->size() - 16);
  EXPECT_EQ(addr, std::string("\x00\x64\xff\x9b\x00\x01\x00\x00\x00\x00\x00\x00\xc6\x12\x00\x01", 16));
  std::array<std::uint8_t, 16> b{};
  std::memcpy(b.data(), addr.data(), 16);
  EXPECT_EQ(names.name_of_v6(b), "v6.test");
}

TEST(DnsAnswer, TheRestGetsNoDataNxdomainNotimpOrFormerr) {
  FakeNames names;
  struct Case {
    const char* what;
    std::string packet;
    int rcode;
  };
  std::string two = query("a.test", 1);
  two[5] = 2;  // QDCOUNT 2
  std::string pointer = query("a.test", 1);
  pointer[12] = '\xc0';  // a compression pointer in the question: a loop's first step
  pointer[13] = '\x0c';  // ... pointing at itself
  std::string long_label = query("a.test", 1);
  long_label[12] = 64;  // a label over 63 bytes
  std::string past_end = query("abcdef.test", 1);
  past_end[12] = 60;  // a label running past the packet
  std::string huge_name = query(std::string(63, 'a') + "." + std::string(63, 'b') + "." +
                                    std::string(63, 'c') + "." + std::string(63, 'd'),
                                1);
  const Case cases[] = {
      {"MX of a name: no data", query("a.test", 15), dns_rcode::kNoError},
      {"not a host name", query("a b.test", 1), dns_rcode::kNxDomain},
      {"the root", query("", 1), dns_rcode::kNxDomain},
      {"class CH", query("a.test", 1, 3), dns_rcode::kNotImp},
      {"opcode 2 (status)", query("a.test", 1, 1, 0x10), dns_rcode::kNotImp},
      {"two questions", two, dns_rcode::kFormErr},
      {"a compression pointer", pointer, dns_rcode::kFormErr},
      {"a 64-byte label", long_label, dns_rcode::kFormErr},
      {"a label past the end", past_end, dns_rcode::kFormErr},
      {"a name over 255 bytes", huge_name, dns_rcode::kFormErr},
      {"no type/class", query("a.test", 1).substr(0, 12 + 8), dns_rcode::kFormErr},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    auto a = dns_answer(c.packet, names);
    ASSERT_TRUE(a.has_value());
    EXPECT_EQ(rcode(*a), c.rcode);
    EXPECT_EQ(answers(*a), 0);
  }
}

TEST(DnsAnswer, ShortPacketsResponsesAndOversizeAreDropped) {
  FakeNames names;
  EXPECT_FALSE(dns_answer("", names).has_value());
  EXPECT_FALSE(dns_answer(std::string(11, '\0'), names).has_value());
  EXPECT_FALSE(dns_answer(query("a.test", 1, 1, 0x81), names).has_value());  // QR set
  EXPECT_FALSE(dns_answer(std::string(kMaxDnsQueryBytes + 1, '\0'), names).has_value());
}

TEST(DnsAnswer, EveryTruncationOfAGoodQueryIsAnsweredOrDroppedNeverRead) {
  // Each prefix is its own buffer: a read past its end is ASan's to catch.
  FakeNames names;
  const std::string q = query("www.example.test", 28);
  for (std::size_t n = 0; n < q.size(); ++n) {
    const std::string cut = q.substr(0, n);
    auto a = dns_answer(cut, names);
    if (n < kDnsHeaderBytes) {
      EXPECT_FALSE(a.has_value()) << n;
    } else {
      ASSERT_TRUE(a.has_value()) << n;
      EXPECT_EQ(rcode(*a), dns_rcode::kFormErr) << n;
    }
  }
}

// DNS over TCP: two bytes of length, then the query; a stream may hold several, or part
// of one.
TEST(DnsTcp, QueriesAreCutByTheirLengthPrefix) {
  const std::string q = query("a.test", 1);
  const std::string one = tcp_framed(q);
  ASSERT_EQ(one.size(), q.size() + 2);
  EXPECT_EQ(static_cast<std::uint8_t>(one[0]), 0);
  EXPECT_EQ(static_cast<std::uint8_t>(one[1]), q.size());
  struct Row {
    std::string stream;
    TcpQuery::State state;
    std::size_t used;
  };
  const Row rows[] = {
      {"", TcpQuery::State::kIncomplete, 0},
      {one.substr(0, 1), TcpQuery::State::kIncomplete, 0},
      {one.substr(0, 2), TcpQuery::State::kIncomplete, 0},
      {one.substr(0, one.size() - 1), TcpQuery::State::kIncomplete, 0},
      {one, TcpQuery::State::kQuery, one.size()},
      {one + one, TcpQuery::State::kQuery, one.size()},  // the first; the rest waits
      {std::string("\x00\x00", 2), TcpQuery::State::kBad, 0},  // a zero length
      {std::string("\x10\x01", 2) + "x", TcpQuery::State::kBad, 0},  // 4097: too long
      {std::string("\xff\xff", 2), TcpQuery::State::kBad, 0},
  };
  for (const Row& r : rows) {
    const TcpQuery t = next_tcp_query(r.stream);
    EXPECT_EQ(t.state, r.state) << r.stream.size();
    EXPECT_EQ(t.used, r.used) << r.stream.size();
    if (t.state == TcpQuery::State::kQuery) {
      EXPECT_EQ(t.query, q);
    }
  }
  // The longest query is taken whole.
  const std::string longest = std::string("\x10\x00", 2) + std::string(kMaxDnsQueryBytes, 'x');
  EXPECT_EQ(next_tcp_query(longest).state, TcpQuery::State::kQuery);
}

TEST(FakeNames, ZeroAndUnknownAddressesMeanNoName) {
  FakeNames names;
  EXPECT_FALSE(names.name_of(0xC6120000).has_value());
  EXPECT_FALSE(names.name_of(0xC6120001).has_value());
  EXPECT_FALSE(names.name_of(0x7F000001).has_value());
  EXPECT_TRUE(FakeNames::is_fake(0xC613FFFF));
  EXPECT_FALSE(FakeNames::is_fake(0xC6140000));
}

}  // namespace
}  // namespace vigil::init
