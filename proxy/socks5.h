// The SOCKS5 handshake (RFC 1928) for the egress proxy, as pure functions: bytes in, a
// parsed message or an error out, and the reply bytes to send. Only what the proxy
// serves: method negotiation with "no authentication", then CONNECT to a domain name,
// an IPv4 or an IPv6 address. The target is not judged here (that is the decision's
// job, so a bad name is reported as a refusal with its reason, like HTTP's).
//
// Pure; no state; safe from any thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace vigil::proxy::socks5 {

inline constexpr std::uint8_t kVersion = 0x05;
inline constexpr std::uint8_t kMethodNoAuth = 0x00;
inline constexpr std::uint8_t kMethodNoneAcceptable = 0xFF;
inline constexpr std::uint8_t kCmdConnect = 0x01;

// Reply codes (RFC 1928 §6).
enum class Reply : std::uint8_t {
  kSucceeded = 0x00,
  kGeneralFailure = 0x01,
  kNotAllowed = 0x02,  // "connection not allowed by ruleset": every policy refusal
  kNetworkUnreachable = 0x03,
  kHostUnreachable = 0x04,  // the name did not resolve
  kConnectionRefused = 0x05,
  kTtlExpired = 0x06,  // used for an upstream connect timeout
  kCommandNotSupported = 0x07,
  kAddressTypeNotSupported = 0x08,
};

enum class ParseState { kIncomplete, kComplete, kError };

// Client greeting: VER NMETHODS METHODS...
struct Greeting {
  ParseState state = ParseState::kIncomplete;
  bool offers_no_auth = false;
  std::size_t size = 0;    // kComplete: bytes consumed
  const char* error = "";  // kError: why
};
Greeting parse_greeting(std::span<const std::uint8_t> bytes);

// The method selection reply: no-auth when offered, else "no acceptable methods".
std::array<std::uint8_t, 2> method_reply(bool no_auth);

// CONNECT request: VER CMD RSV ATYP DST.ADDR DST.PORT.
struct Request {
  enum class AddressType { kIPv4, kDomain, kIPv6 };
  ParseState state = ParseState::kIncomplete;
  AddressType type = AddressType::kDomain;
  // kIPv4: dotted quad; kIPv6: inet_ntop text; kDomain: the raw bytes as sent (may hold
  // anything; the decision canonicalises or refuses them).
  std::string host;
  std::uint16_t port = 0;
  std::size_t size = 0;
  // kError: the reply code to send before closing, and why.
  Reply reply = Reply::kGeneralFailure;
  const char* error = "";
};
Request parse_request(std::span<const std::uint8_t> bytes);

// A reply to a CONNECT request. BND.ADDR/BND.PORT are 0.0.0.0:0: clients do not use
// them for CONNECT, and the proxy's own addresses are none of the sandbox's business.
std::array<std::uint8_t, 10> reply(Reply code);

// What a SOCKS4 / SOCKS4a client gets: VN=0, CD=91 ("request rejected or failed"),
// so that it fails at once instead of waiting for a SOCKS5 answer it cannot parse.
std::array<std::uint8_t, 8> socks4_rejection();

}  // namespace vigil::proxy::socks5
