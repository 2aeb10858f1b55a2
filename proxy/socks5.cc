#include "proxy/socks5.h"

#include <arpa/inet.h>

namespace vigil::proxy::socks5 {

Greeting parse_greeting(std::span<const std::uint8_t> b) {
  Greeting g;
  if (b.empty()) return g;
  if (b[0] != kVersion) {
    g.state = ParseState::kError;
    g.error = "not a SOCKS5 greeting";
    return g;
  }
  if (b.size() < 2) return g;
  const std::size_t n = b[1];
  if (n == 0) {
    g.state = ParseState::kError;
    g.error = "SOCKS5 greeting offers no methods";
    return g;
  }
  if (b.size() < 2 + n) return g;
  for (std::size_t i = 0; i < n; ++i) {
    if (b[2 + i] == kMethodNoAuth) g.offers_no_auth = true;
  }
  g.state = ParseState::kComplete;
  g.size = 2 + n;
  return g;
}

std::array<std::uint8_t, 2> method_reply(bool no_auth) {
  return {kVersion, no_auth ? kMethodNoAuth : kMethodNoneAcceptable};
}

Request parse_request(std::span<const std::uint8_t> b) {
  Request r;
  auto fail = [&r](Reply code, const char* why) {
    r.state = ParseState::kError;
    r.reply = code;
    r.error = why;
    return r;
  };
  if (b.size() < 4) {
    // Judge what has arrived so far, so a wrong version fails without waiting.
    if (!b.empty() && b[0] != kVersion) return fail(Reply::kGeneralFailure, "not a SOCKS5 request");
    return r;
  }
  if (b[0] != kVersion) return fail(Reply::kGeneralFailure, "not a SOCKS5 request");
  if (b[1] != kCmdConnect)
    return fail(Reply::kCommandNotSupported, "only CONNECT is supported (no BIND or UDP)");
  if (b[2] != 0x00) return fail(Reply::kGeneralFailure, "reserved byte is not zero");
  std::size_t addr_len = 0;
  std::size_t addr_at = 4;
  switch (b[3]) {
    case 0x01:
      r.type = Request::AddressType::kIPv4;
      addr_len = 4;
      break;
    case 0x03:
      r.type = Request::AddressType::kDomain;
      if (b.size() < 5) return r;
      addr_len = b[4];
      addr_at = 5;
      break;
    case 0x04:
      r.type = Request::AddressType::kIPv6;
      addr_len = 16;
      break;
    default:
      return fail(Reply::kAddressTypeNotSupported, "unknown address type");
  }
  const std::size_t total = addr_at + addr_len + 2;
  if (b.size() < total) return r;
  const auto* addr = b.data() + addr_at;
  switch (r.type) {
    case Request::AddressType::kIPv4:
    case Request::AddressType::kIPv6: {
      char text[INET6_ADDRSTRLEN] = {};
      const int family = r.type == Request::AddressType::kIPv4 ? AF_INET : AF_INET6;
      if (::inet_ntop(family, addr, text, sizeof text) == nullptr) {
        return fail(Reply::kGeneralFailure, "unprintable address");
      }
      r.host = text;
      break;
    }
    case Request::AddressType::kDomain:
      r.host.assign(reinterpret_cast<const char*>(addr), addr_len);
      break;
  }
  r.port = static_cast<std::uint16_t>((b[addr_at + addr_len] << 8) | b[addr_at + addr_len + 1]);
  r.state = ParseState::kComplete;
  r.size = total;
  return r;
}

std::array<std::uint8_t, 10> reply(Reply code) {
  return {kVersion, static_cast<std::uint8_t>(code), 0x00, 0x01, 0, 0, 0, 0, 0, 0};
}

std::array<std::uint8_t, 8> socks4_rejection() { return {0x00, 91, 0, 0, 0, 0, 0, 0}; }

}  // namespace vigil::proxy::socks5
