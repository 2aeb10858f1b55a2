// What the header fields say: where a body ends (RFC 9112 §6.3, strictly: the smuggling
// shapes are refused), whether a connection is kept alive, and the heads rewritten for
// the other side (hop-by-hop fields removed, Host rebuilt from the canonical target).
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "proxy/http_head.h"
#include "proxy/http_text.h"

namespace vigil::proxy::http {
namespace {

using detail::append_field;
using detail::err;
using detail::trim_ows;


// Every comma-separated element of every `name` field, trimmed, empty ones dropped.
std::vector<std::string_view> list_values(const std::vector<Header>& headers,
                                          std::string_view name) {
  std::vector<std::string_view> out;
  for (const auto& h : headers) {
    if (!iequals(h.name, name)) continue;
    std::string_view v = h.value;
    while (true) {
      const std::size_t comma = v.find(',');
      const std::string_view elem = trim_ows(v.substr(0, comma));
      if (!elem.empty()) out.push_back(elem);
      if (comma == std::string_view::npos) break;
      v.remove_prefix(comma + 1);
    }
  }
  return out;
}

bool has_field(const std::vector<Header>& headers, std::string_view name) {
  return std::any_of(headers.begin(), headers.end(),
                     [&](const Header& h) { return iequals(h.name, name); });
}

bool has_token(const std::vector<Header>& headers, std::string_view name, std::string_view token) {
  for (std::string_view v : list_values(headers, name)) {
    if (iequals(v, token)) return true;
  }
  return false;
}

// Content-Length: every value (across fields and list elements) must be the same
// decimal number; anything else is !ok (malformed or conflicting).
struct LengthField {
  bool present = false;
  bool ok = true;
  std::uint64_t value = 0;
};

LengthField content_length(const std::vector<Header>& headers) {
  LengthField r;
  bool have_value = false;
  for (const auto& h : headers) {
    if (!iequals(h.name, "content-length")) continue;
    r.present = true;
    std::string_view v = h.value;
    while (true) {
      const std::size_t comma = v.find(',');
      const std::string_view elem = trim_ows(v.substr(0, comma));
      // 19 digits always fit in 64 bits; a longer length is no real body.
      if (elem.empty() || elem.size() > 19 ||
          !std::all_of(elem.begin(), elem.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        r.ok = false;
        return r;
      }
      std::uint64_t n = 0;
      for (char c : elem) n = n * 10 + static_cast<std::uint64_t>(c - '0');
      if (have_value && n != r.value) {
        r.ok = false;
        return r;
      }
      r.value = n;
      have_value = true;
      if (comma == std::string_view::npos) break;
      v.remove_prefix(comma + 1);
    }
  }
  return r;
}

// The transfer codings, the last one first checked: true when chunked is the final
// coding and appears only once.
struct TransferCodings {
  bool present = false;
  bool chunked_last = false;
  bool chunked_twice_or_early = false;
  bool empty = false;
};

TransferCodings transfer_codings(const std::vector<Header>& headers) {
  TransferCodings t;
  t.present = has_field(headers, "transfer-encoding");
  if (!t.present) return t;
  const auto codings = list_values(headers, "transfer-encoding");
  if (codings.empty()) {
    t.empty = true;
    return t;
  }
  for (std::size_t i = 0; i < codings.size(); ++i) {
    std::string_view c = trim_ows(codings[i].substr(0, codings[i].find(';')));
    if (iequals(c, "chunked")) {
      if (i + 1 == codings.size()) {
        t.chunked_last = true;
      } else {
        t.chunked_twice_or_early = true;
      }
    }
  }
  return t;
}

bool is_hop_by_hop(std::string_view name) {
  static constexpr std::array<std::string_view, 7> kNames = {
      "connection",         "keep-alive", "proxy-connection", "proxy-authorization",
      "proxy-authenticate", "te",         "upgrade"};
  return std::any_of(kNames.begin(), kNames.end(),
                     [&](std::string_view n) { return iequals(n, name); });
}

// Fields the client listed in Connection / Proxy-Connection are hop-by-hop too, except
// the framing fields: dropping Content-Length because "Connection: content-length" said
// so would let the body be read as the next request upstream (request smuggling).
bool named_in_connection(const std::vector<Header>& headers, std::string_view name) {
  if (iequals(name, "content-length") || iequals(name, "transfer-encoding") ||
      iequals(name, "host"))
    return false;
  return has_token(headers, "connection", name) || has_token(headers, "proxy-connection", name);
}

}  // namespace

FramingResult request_framing(const RequestHead& head) {
  FramingResult r;
  const TransferCodings te = transfer_codings(head.headers);
  const LengthField cl = content_length(head.headers);
  if (te.present) {
    if (cl.present) {
      r.error = err(400, "both Transfer-Encoding and Content-Length (refused: ambiguous framing)");
      return r;
    }
    if (head.minor_version == 0) {
      r.error = err(400, "Transfer-Encoding in an HTTP/1.0 request");
      return r;
    }
    if (te.empty || te.chunked_twice_or_early) {
      r.error = err(400, "malformed Transfer-Encoding");
      return r;
    }
    if (!te.chunked_last) {
      r.error = err(501, "request Transfer-Encoding must end in chunked");
      return r;
    }
    r.ok = true;
    r.framing.kind = BodyFraming::Kind::kChunked;
    return r;
  }
  if (cl.present) {
    if (!cl.ok) {
      r.error = err(400, "malformed Content-Length");
      return r;
    }
    r.ok = true;
    r.framing.kind = cl.value == 0 ? BodyFraming::Kind::kNone : BodyFraming::Kind::kLength;
    r.framing.length = cl.value;
    return r;
  }
  r.ok = true;
  return r;
}

FramingResult response_framing(const ResponseHead& head, std::string_view request_method) {
  FramingResult r;
  r.ok = true;
  if (iequals(request_method, "HEAD") || (head.status >= 100 && head.status < 200) ||
      head.status == 204 || head.status == 304) {
    return r;  // kNone
  }
  const TransferCodings te = transfer_codings(head.headers);
  if (te.present) {
    r.framing.kind = (te.chunked_last && !te.chunked_twice_or_early)
                         ? BodyFraming::Kind::kChunked
                         : BodyFraming::Kind::kUntilClose;
    return r;
  }
  const LengthField cl = content_length(head.headers);
  if (cl.present) {
    if (!cl.ok) {
      r.ok = false;
      r.error = err(502, "upstream sent a malformed Content-Length");
      return r;
    }
    r.framing.kind = cl.value == 0 ? BodyFraming::Kind::kNone : BodyFraming::Kind::kLength;
    r.framing.length = cl.value;
    return r;
  }
  r.framing.kind = BodyFraming::Kind::kUntilClose;
  return r;
}

bool client_wants_keep_alive(const RequestHead& head) {
  if (head.minor_version == 0) return false;
  return !has_token(head.headers, "connection", "close") &&
         !has_token(head.headers, "proxy-connection", "close");
}

bool upstream_keeps_alive(const ResponseHead& head, const BodyFraming& framing) {
  return head.minor_version == 1 && framing.kind != BodyFraming::Kind::kUntilClose &&
         !has_token(head.headers, "connection", "close");
}

std::string upstream_request_head(const RequestHead& head, const Target& target,
                                  const CanonicalHost& host, bool close) {
  std::string out;
  out.reserve(256 + head.target.size() + head.headers.size() * 48);
  out.append(head.method);
  out.push_back(' ');
  out.append(target.origin_form);
  out.append(head.minor_version == 0 ? " HTTP/1.0\r\n" : " HTTP/1.1\r\n");
  std::string host_value =
      host.kind == CanonicalHost::Kind::kIPv6 ? "[" + host.text + "]" : host.text;
  if (target.port != 80) host_value += ":" + std::to_string(target.port);
  append_field(&out, "Host", host_value);
  for (const auto& h : head.headers) {
    if (iequals(h.name, "host") || is_hop_by_hop(h.name) ||
        named_in_connection(head.headers, h.name))
      continue;
    append_field(&out, h.name, h.value);
  }
  if (close) append_field(&out, "Connection", "close");
  out.append("\r\n");
  return out;
}

std::string client_response_head(const ResponseHead& head, bool close) {
  std::string out;
  out.reserve(256 + head.headers.size() * 48);
  out.append("HTTP/1.1 ");
  out.append(std::to_string(head.status));
  out.push_back(' ');
  out.append(head.reason);
  out.append("\r\n");
  const bool chunked = has_field(head.headers, "transfer-encoding");
  for (const auto& h : head.headers) {
    if (is_hop_by_hop(h.name) || named_in_connection(head.headers, h.name)) continue;
    if (chunked && iequals(h.name, "content-length")) continue;
    append_field(&out, h.name, h.value);
  }
  if (close) append_field(&out, "Connection", "close");
  out.append("\r\n");
  return out;
}

}  // namespace vigil::proxy::http
