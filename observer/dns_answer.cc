#include "observer/dns_answer.h"

#include <cstdint>

namespace vigil::init {
namespace {

constexpr std::uint16_t kTypeA = 1, kTypeAaaa = 28, kClassIn = 1;
constexpr std::size_t kMaxName = 255, kMaxLabel = 63;

std::uint16_t u16(std::string_view s, std::size_t at) {
  return static_cast<std::uint16_t>((static_cast<std::uint8_t>(s[at]) << 8) |
                                    static_cast<std::uint8_t>(s[at + 1]));
}

void put16(std::string* out, std::uint16_t v) {
  out->push_back(static_cast<char>(v >> 8));
  out->push_back(static_cast<char>(v & 0xff));
}

void put32(std::string* out, std::uint32_t v) {
  put16(out, static_cast<std::uint16_t>(v >> 16));
  put16(out, static_cast<std::uint16_t>(v & 0xffff));
}

struct Question {
  std::string name;       // lower case, dotted, no trailing dot
  bool host_name = true;  // every label letters, digits, '-' or '_'
  std::size_t end = 0;    // offset just past QTYPE/QCLASS
  std::uint16_t type = 0, klass = 0;
};

// The one question after the header: labels only (a pointer is malformed in a question:
// nothing precedes it to point at, and refusing it rules out every loop), bounded by the
// packet and by 255 bytes of name.
std::optional<Question> parse_question(std::string_view q) {
  Question out;
  std::size_t at = kDnsHeaderBytes, wire = 0;
  while (true) {
    if (at >= q.size()) return std::nullopt;
    const auto len = static_cast<std::uint8_t>(q[at]);
    if (len == 0) break;
    if (len > kMaxLabel) return std::nullopt;  // 0xC0 pointers and the reserved 0x40/0x80
    wire += len + 1;
    if (wire + 1 > kMaxName || at + 1 + len > q.size()) return std::nullopt;
    if (!out.name.empty()) out.name.push_back('.');
    for (std::size_t i = at + 1; i <= at + len; ++i) {
      char c = q[i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
      if (!ok) out.host_name = false;
      out.name.push_back(ok ? c : '?');
    }
    at += 1 + len;
  }
  at += 1;  // the root label
  if (at + 4 > q.size()) return std::nullopt;
  out.type = u16(q, at);
  out.klass = u16(q, at + 2);
  out.end = at + 4;
  if (out.name.empty()) out.host_name = false;
  return out;
}

// Header of the answer: the query's id and RD, QR and RA set, `rcode`, the counts.
std::string header(std::string_view q, int rcode, std::uint16_t questions, std::uint16_t answers) {
  std::string out;
  out.append(q.substr(0, 2));
  const auto rd = static_cast<std::uint8_t>(q[2]) & 0x01;
  out.push_back(static_cast<char>(0x80 | 0x04 | rd));  // QR, AA, RD as asked; opcode 0
  out.push_back(static_cast<char>(0x80 | (rcode & 0x0f)));  // RA
  put16(&out, questions);
  put16(&out, answers);
  put16(&out, 0);
  put16(&out, 0);
  return out;
}

}  // namespace

TcpQuery next_tcp_query(std::string_view stream) {
  TcpQuery t;
  if (stream.size() < 2) return t;
  const std::size_t len = u16(stream, 0);
  if (len == 0 || len > kMaxDnsQueryBytes) {
    t.state = TcpQuery::State::kBad;
    return t;
  }
  if (stream.size() < 2 + len) return t;
  t.state = TcpQuery::State::kQuery;
  t.query = stream.substr(2, len);
  t.used = 2 + len;
  return t;
}

std::string tcp_framed(std::string_view answer) {
  std::string out;
  put16(&out, static_cast<std::uint16_t>(answer.size()));
  out.append(answer);
  return out;
}

std::optional<std::string> dns_question_name(std::string_view query) {
  if (query.size() < kDnsHeaderBytes || u16(query, 4) != 1) return std::nullopt;
  auto q = parse_question(query);
  if (!q) return std::nullopt;
  return q->name;
}

std::optional<std::string> dns_answer(std::string_view q, FakeNames& names) {
  if (q.size() < kDnsHeaderBytes || q.size() > kMaxDnsQueryBytes) return std::nullopt;
  const auto flags = static_cast<std::uint8_t>(q[2]);
  if (flags & 0x80) return std::nullopt;  // a response: never answered (no reflection)
  const int opcode = (flags >> 3) & 0x0f;
  if (opcode != 0) return header(q, dns_rcode::kNotImp, 0, 0);
  if (u16(q, 4) != 1) return header(q, dns_rcode::kFormErr, 0, 0);
  const auto question = parse_question(q);
  if (!question) return header(q, dns_rcode::kFormErr, 0, 0);
  const std::string_view asked = q.substr(kDnsHeaderBytes, question->end - kDnsHeaderBytes);
  auto with_question = [&](int rcode, std::uint16_t answers) {
    std::string out = header(q, rcode, 1, answers);
    out.append(asked);
    return out;
  };
  if (question->klass != kClassIn) return with_question(dns_rcode::kNotImp, 0);
  if (!question->host_name) return with_question(dns_rcode::kNxDomain, 0);
  if (question->type != kTypeA && question->type != kTypeAaaa)
    return with_question(dns_rcode::kNoError, 0);
  const auto addr = names.address_of(question->name);
  if (!addr) return with_question(dns_rcode::kServFail, 0);
  std::string out = with_question(dns_rcode::kNoError, 1);
  put16(&out, 0xC000 | kDnsHeaderBytes);  // the question's name
  put16(&out, question->type);
  put16(&out, kClassIn);
  put32(&out, kFakeTtlSeconds);
  if (question->type == kTypeA) {
    put16(&out, 4);
    put32(&out, *addr);
  } else {
    put16(&out, 16);
    for (std::uint8_t b : FakeNames::v6_of(*addr)) out.push_back(static_cast<char>(b));
  }
  return out;
}

}  // namespace vigil::init
