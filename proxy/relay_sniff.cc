#include "proxy/relay_sniff.h"

#include "proxy/http_head.h"
#include "proxy/socks5.h"

namespace vigil::proxy {
namespace {

constexpr std::size_t kMaxHostBytes = 300;

Sniffed found(NetProto proto, std::string host, std::uint16_t port) {
  Sniffed s;
  s.state = Sniffed::State::kFound;
  s.proto = proto;
  if (host.size() > kMaxHostBytes) host.resize(kMaxHostBytes);
  s.host = std::move(host);
  s.port = port;
  return s;
}

Sniffed unknown(NetProto proto) {
  Sniffed s;
  s.state = Sniffed::State::kUnknown;
  s.proto = proto;
  return s;
}

Sniffed incomplete(NetProto proto, std::size_t seen) {
  if (seen >= kMaxSniffBytes) return unknown(proto);
  Sniffed s;
  s.proto = proto;
  return s;
}

}  // namespace

Sniffed sniff_http_target(std::string_view bytes) {
  // Empty lines before the request line are allowed (RFC 9112 §2.2).
  std::size_t start = 0;
  while (start < bytes.size() && (bytes[start] == '\r' || bytes[start] == '\n')) ++start;
  const std::size_t eol = bytes.find('\n', start);
  if (eol == std::string_view::npos) return incomplete(NetProto::kHttp, bytes.size());
  std::string_view line = bytes.substr(start, eol - start);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  const std::size_t sp1 = line.find(' ');
  const std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos) return unknown(NetProto::kHttp);
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  if (method == "CONNECT") {
    const auto t = http::parse_authority_form(target);
    return t.ok ? found(NetProto::kConnect, t.target.host, t.target.port) : unknown(NetProto::kConnect);
  }
  const auto t = http::parse_absolute_form(target);
  return t.ok ? found(NetProto::kHttp, t.target.host, t.target.port) : unknown(NetProto::kHttp);
}

Sniffed sniff_socks5_target(std::span<const std::uint8_t> bytes) {
  const auto greeting = socks5::parse_greeting(bytes);
  if (greeting.state == socks5::ParseState::kIncomplete)
    return incomplete(NetProto::kSocks5, bytes.size());
  if (greeting.state == socks5::ParseState::kError) return unknown(NetProto::kSocks5);
  std::span<const std::uint8_t> rest = bytes.subspan(greeting.size);
  // RFC 1929 username/password: VER=1 ULEN UNAME PLEN PASSWD, before the request.
  if (!rest.empty() && rest[0] == 0x01) {
    if (rest.size() < 2) return incomplete(NetProto::kSocks5, bytes.size());
    const std::size_t plen_at = 2 + std::size_t{rest[1]};
    if (rest.size() <= plen_at) return incomplete(NetProto::kSocks5, bytes.size());
    const std::size_t auth = plen_at + 1 + std::size_t{rest[plen_at]};
    if (rest.size() < auth) return incomplete(NetProto::kSocks5, bytes.size());
    rest = rest.subspan(auth);
  }
  const auto req = socks5::parse_request(rest);
  if (req.state == socks5::ParseState::kIncomplete) return incomplete(NetProto::kSocks5, bytes.size());
  if (req.state == socks5::ParseState::kError) return unknown(NetProto::kSocks5);
  return found(NetProto::kSocks5, req.host, req.port);
}

}  // namespace vigil::proxy
