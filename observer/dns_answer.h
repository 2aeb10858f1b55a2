// The DNS stub's pure half (vigil.network.capture): one query in, one answer out, so the
// parser meets every hostile packet in a table test (tests/unit/observer/dns_answer_test.cc)
// and the I/O shell (observer/dns_stub.h) only moves bytes.
//
// What is answered: a standard query (opcode 0) with one question of class IN. A and AAAA
// get one fake address for the name (observer/fake_names.h): every name resolves, one the
// allowlist refuses too, so the refusal comes at connect() with its reason. Another type
// of a valid name: no data (NOERROR, no answer). Not a host name: NXDOMAIN. Another
// opcode: NOTIMP. Anything malformed (a compression pointer in the question, a label
// running past the end, a name over 255 bytes, more or fewer than one question): FORMERR.
// A packet too short for a header, or a response, is dropped.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "observer/fake_names.h"

namespace vigil::init {

inline constexpr std::size_t kDnsHeaderBytes = 12;
inline constexpr std::size_t kMaxDnsQueryBytes = 4096;
inline constexpr std::uint32_t kFakeTtlSeconds = 60;

namespace dns_rcode {
inline constexpr int kNoError = 0, kFormErr = 1, kServFail = 2, kNxDomain = 3, kNotImp = 4,
                     kRefused = 5;
}

// The answer to `query`, or nullopt when it gets none (dropped). Gives `names` a new entry
// for a new valid name asked for with A or AAAA.
std::optional<std::string> dns_answer(std::string_view query, FakeNames& names);

// DNS over TCP (RFC 1035 4.2.2, RFC 7766): each message comes after its length, two bytes
// big-endian. The first query whole in `stream`: kQuery with the query and how many bytes
// of `stream` it took (prefix included); kIncomplete until it is all there; kBad for a
// length of 0 or over kMaxDnsQueryBytes (the stub closes that connection). Pure.
struct TcpQuery {
  enum class State { kIncomplete, kQuery, kBad };
  State state = State::kIncomplete;
  std::string_view query;
  std::size_t used = 0;
};
TcpQuery next_tcp_query(std::string_view stream);
// `answer` with its two-byte length in front, as a TCP answer is sent. Pure.
std::string tcp_framed(std::string_view answer);

// The question's name, lower case, without the trailing dot ("" for the root), when
// `query` has a well-formed single question; for tests and the stub's line.
std::optional<std::string> dns_question_name(std::string_view query);

}  // namespace vigil::init
