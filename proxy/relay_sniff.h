// What a client asked an external proxy for, read from the first bytes it sent, for the
// record only (network.httpProxyPort / socksProxyPort: the user's proxy decides, vigil
// passes the bytes on unchanged and logs the target it saw). Pure; nothing here refuses
// anything: bytes it cannot read are still passed on, and logged as an unknown target.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "proxy/events.h"

namespace vigil::proxy {

// After this many bytes without a target, the connection is logged as unknown.
inline constexpr std::size_t kMaxSniffBytes = 8192;

struct Sniffed {
  enum class State { kIncomplete, kFound, kUnknown };
  State state = State::kIncomplete;
  NetProto proto = NetProto::kHttp;
  std::string host;  // as the client wrote it (brackets removed), at most 300 bytes
  std::uint16_t port = 0;
};

// The request line of an HTTP proxy request: CONNECT host:port, or an absolute-form
// http://host[:port]/... (port 80 by default).
Sniffed sniff_http_target(std::string_view first_bytes);

// A SOCKS5 greeting, an optional username/password exchange (RFC 1929), then CONNECT.
Sniffed sniff_socks5_target(std::span<const std::uint8_t> first_bytes);

}  // namespace vigil::proxy
