// libFuzzer target for the SOCKS5 handshake parsers. Beyond "no crash, no UB":
//  - a message parsed from a prefix is the same as from the whole input (bytes after a
//    message never change it), and every shorter prefix of a complete message is
//    "incomplete", never an error or a different message: no read pattern changes
//    the result;
//  - a parsed CONNECT request re-encodes to exactly the bytes it was parsed from.
// Built only with -DVIGIL_FUZZ=ON and clang (see proxy/CMakeLists.txt).
#include <arpa/inet.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "proxy/socks5.h"
#include "tests/fuzz/fuzz_property.h"

namespace {

using namespace vigil::proxy::socks5;

std::vector<std::uint8_t> encode(const Request& r) {
  std::vector<std::uint8_t> out = {kVersion, kCmdConnect, 0x00};
  switch (r.type) {
    case Request::AddressType::kIPv4: {
      out.push_back(0x01);
      std::uint8_t b[4];
      if (::inet_pton(AF_INET, r.host.c_str(), b) != 1) fail();
      out.insert(out.end(), b, b + 4);
      break;
    }
    case Request::AddressType::kIPv6: {
      out.push_back(0x04);
      std::uint8_t b[16];
      if (::inet_pton(AF_INET6, r.host.c_str(), b) != 1) fail();
      out.insert(out.end(), b, b + 16);
      break;
    }
    case Request::AddressType::kDomain:
      out.push_back(0x03);
      if (r.host.size() > 255) fail();
      out.push_back(static_cast<std::uint8_t>(r.host.size()));
      out.insert(out.end(), r.host.begin(), r.host.end());
      break;
  }
  out.push_back(static_cast<std::uint8_t>(r.port >> 8));
  out.push_back(static_cast<std::uint8_t>(r.port & 0xFF));
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> in(data, size);

  const Greeting g = parse_greeting(in);
  if (g.state == ParseState::kComplete) {
    if (g.size < 3 || g.size > size) fail();
    for (std::size_t n = 0; n < g.size; ++n) {
      if (parse_greeting(in.first(n)).state != ParseState::kIncomplete) fail();
    }
    const Greeting exact = parse_greeting(in.first(g.size));
    if (exact.state != ParseState::kComplete || exact.offers_no_auth != g.offers_no_auth) fail();
    if (method_reply(g.offers_no_auth)[1] !=
        (g.offers_no_auth ? kMethodNoAuth : kMethodNoneAcceptable))
      fail();
  } else if (g.state == ParseState::kError && std::strlen(g.error) == 0) {
    fail();
  }

  const Request r = parse_request(in);
  if (r.state == ParseState::kComplete) {
    if (r.size > size) fail();
    for (std::size_t n = 0; n < r.size; ++n) {
      if (parse_request(in.first(n)).state != ParseState::kIncomplete) fail();
    }
    const Request exact = parse_request(in.first(r.size));
    if (exact.state != ParseState::kComplete || exact.host != r.host || exact.port != r.port)
      fail();
    const auto bytes = encode(r);
    if (bytes.size() != r.size || std::memcmp(bytes.data(), data, r.size) != 0) fail();
  } else if (r.state == ParseState::kError) {
    if (std::strlen(r.error) == 0 || r.reply == Reply::kSucceeded) fail();
    // More bytes never turn an error into something else.
    std::vector<std::uint8_t> longer(data, data + size);
    longer.push_back(0);
    const Request again = parse_request(longer);
    if (again.state != ParseState::kError || again.reply != r.reply) fail();
  }
  (void)reply(static_cast<Reply>(size & 0xFF));
  return 0;
}
