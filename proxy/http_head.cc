#include "proxy/http_head.h"

#include <algorithm>
#include <array>
#include <optional>

namespace vigil::proxy::http {
namespace {

constexpr bool is_tchar(unsigned char c) {
  if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':
      return true;
    default:
      return false;
  }
}

// field-vchar / obs-text / SP / HTAB: what a field value or reason phrase may hold.
constexpr bool is_field_byte(unsigned char c) { return c == '\t' || (c >= 0x20 && c != 0x7f); }

bool is_token(std::string_view s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return is_tchar(static_cast<unsigned char>(c)); });
}

std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

HeadError err(int status, std::string message) { return HeadError{status, std::move(message)}; }

// Where the head lies in `bytes`: [start, end), start after any leading empty lines,
// end just past the blank line.
struct Span {
  ParseState state = ParseState::kIncomplete;
  std::size_t start = 0;
  std::size_t end = 0;
  HeadError error;
};

Span find_head(std::string_view b, HeadScan* scan, std::size_t max_head) {
  Span s;
  std::size_t i = 0;
  // Leading empty lines (a client may send CRLF after a body, RFC 9112 §2.2).
  while (i < b.size()) {
    if (b[i] == '\n') {
      ++i;
    } else if (b[i] == '\r') {
      if (i + 1 >= b.size()) break;  // need the next byte
      if (b[i + 1] != '\n') {
        s.state = ParseState::kError;
        s.error = err(400, "bare CR in the request");
        return s;
      }
      i += 2;
    } else {
      break;
    }
  }
  s.start = i;
  std::size_t pos = std::max(i, scan != nullptr ? scan->searched : 0);
  while (true) {
    const std::size_t nl = b.find('\n', pos);
    if (nl == std::string_view::npos) {
      if (scan != nullptr) scan->searched = b.size();
      break;
    }
    // An empty line follows this LF: "\n\n" or "\n\r\n".
    if (nl + 1 >= b.size() || (b[nl + 1] == '\r' && nl + 2 >= b.size())) {
      if (scan != nullptr) scan->searched = nl;  // look at this LF again with more bytes
      break;
    }
    if (b[nl + 1] == '\n') {
      s.end = nl + 2;
    } else if (b[nl + 1] == '\r' && b[nl + 2] == '\n') {
      s.end = nl + 3;
    }
    if (s.end != 0) {
      if (s.end > max_head) {
        s.state = ParseState::kError;
        s.error = err(431, "request head larger than " + std::to_string(max_head) + " bytes");
        return s;
      }
      s.state = ParseState::kComplete;
      return s;
    }
    pos = nl + 1;
  }
  if (b.size() > max_head) {
    s.state = ParseState::kError;
    s.error = err(431, "request head larger than " + std::to_string(max_head) + " bytes");
  }
  return s;
}

// Splits [start, end) into lines without their terminators. The last (blank) line is
// not returned. A CR anywhere but right before the LF is an error.
std::optional<HeadError> split_lines(std::string_view b, const Span& s,
                                     std::vector<std::string_view>* lines) {
  std::size_t pos = s.start;
  while (pos < s.end) {
    const std::size_t nl = b.find('\n', pos);  // always found: the head ends with LF
    std::string_view line = b.substr(pos, nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find('\r') != std::string_view::npos) return err(400, "bare CR in the head");
    if (line.find('\0') != std::string_view::npos) return err(400, "NUL byte in the head");
    pos = nl + 1;
    if (line.empty()) break;  // the blank line that ends the head
    lines->push_back(line);
  }
  return std::nullopt;
}

std::optional<HeadError> parse_fields(const std::vector<std::string_view>& lines,
                                      std::vector<Header>* out) {
  if (lines.size() - 1 > kMaxHeaderFields) {
    return err(431, "more than " + std::to_string(kMaxHeaderFields) + " header fields");
  }
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    if (line.front() == ' ' || line.front() == '\t') {
      return err(400, "obsolete line folding in a header field");
    }
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) return err(400, "header line without a colon");
    const std::string_view name = line.substr(0, colon);
    if (!is_token(name))
      return err(400, "invalid header field name (or whitespace before the colon)");
    const std::string_view value = trim_ows(line.substr(colon + 1));
    for (char c : value) {
      if (!is_field_byte(static_cast<unsigned char>(c)))
        return err(400, "control byte in a header field value");
    }
    out->push_back(Header{std::string(name), std::string(value)});
  }
  return std::nullopt;
}

// "HTTP/1.0" / "HTTP/1.1" -> minor version; another HTTP/x.y -> 505; else 400.
std::optional<int> parse_version(std::string_view v, HeadError* e) {
  if (v == "HTTP/1.1") return 1;
  if (v == "HTTP/1.0") return 0;
  if (v.size() == 8 && v.substr(0, 5) == "HTTP/" && v[5] >= '0' && v[5] <= '9' && v[6] == '.' &&
      v[7] >= '0' && v[7] <= '9') {
    *e = err(505, "HTTP version not supported (the proxy speaks HTTP/1.0 and HTTP/1.1)");
  } else {
    *e = err(400, "malformed HTTP version");
  }
  return std::nullopt;
}

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

TargetParse target_error(int status, std::string message) {
  TargetParse t;
  t.error = err(status, std::move(message));
  return t;
}

// host[:port] or [v6][:port]. `default_port` 0 = the port is required.
TargetParse parse_host_port(std::string_view a, std::uint16_t default_port) {
  TargetParse t;
  std::string_view host;
  std::string_view rest;
  if (!a.empty() && a.front() == '[') {
    const std::size_t close = a.find(']');
    if (close == std::string_view::npos)
      return target_error(400, "unterminated [ in the target host");
    host = a.substr(1, close - 1);
    rest = a.substr(close + 1);
    if (!rest.empty() && rest.front() != ':')
      return target_error(400, "junk after ] in the target host");
  } else {
    const std::size_t colon = a.find(':');
    if (colon != std::string_view::npos && a.find(':', colon + 1) != std::string_view::npos) {
      return target_error(400, "an IPv6 target must be written in brackets");
    }
    host = a.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view{} : a.substr(colon);
  }
  if (host.empty()) return target_error(400, "empty target host");
  std::uint32_t port = default_port;
  if (!rest.empty()) {
    const std::string_view digits = rest.substr(1);
    if (digits.empty()) {
      if (default_port == 0) return target_error(400, "empty target port");
    } else {
      if (digits.size() > 5 ||
          !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return target_error(400, "invalid target port");
      }
      port = 0;
      for (char c : digits) port = port * 10 + static_cast<std::uint32_t>(c - '0');
    }
  }
  if (port == 0 || port > 65535) {
    return target_error(400, default_port == 0 && rest.empty()
                                 ? "CONNECT target needs a port (host:port)"
                                 : "target port out of range (1-65535)");
  }
  t.ok = true;
  t.target.host = std::string(host);
  t.target.port = static_cast<std::uint16_t>(port);
  return t;
}

void append_field(std::string* out, std::string_view name, std::string_view value) {
  out->append(name);
  out->append(": ");
  out->append(value);
  out->append("\r\n");
}

}  // namespace

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

HeadParse<RequestHead> parse_request_head(std::string_view bytes, HeadScan* scan,
                                          std::size_t max_head) {
  HeadParse<RequestHead> r;
  const Span s = find_head(bytes, scan, max_head);
  if (s.state != ParseState::kComplete) {
    r.state = s.state;
    r.error = s.error;
    return r;
  }
  r.state = ParseState::kError;
  std::vector<std::string_view> lines;
  if (auto e = split_lines(bytes, s, &lines)) {
    r.error = *e;
    return r;
  }
  // Request line: method SP request-target SP HTTP-version, single spaces.
  const std::string_view line = lines.front();
  const std::size_t sp1 = line.find(' ');
  const std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    r.error = err(400, "malformed request line");
    return r;
  }
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  if (!is_token(method)) {
    r.error = err(400, "malformed request method");
    return r;
  }
  if (target.empty() || !std::all_of(target.begin(), target.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u > 0x20 && u < 0x7f;
      })) {
    r.error = err(400, "malformed request target");
    return r;
  }
  const auto minor = parse_version(line.substr(sp2 + 1), &r.error);
  if (!minor) return r;
  if (auto e = parse_fields(lines, &r.head.headers)) {
    r.error = *e;
    return r;
  }
  r.head.method = std::string(method);
  r.head.target = std::string(target);
  r.head.minor_version = *minor;
  r.state = ParseState::kComplete;
  r.size = s.end;
  return r;
}

HeadParse<ResponseHead> parse_response_head(std::string_view bytes, HeadScan* scan,
                                            std::size_t max_head) {
  HeadParse<ResponseHead> r;
  const Span s = find_head(bytes, scan, max_head);
  if (s.state != ParseState::kComplete) {
    r.state = s.state;
    r.error = s.error;
    if (r.error.status == 431)
      r.error = err(502, "response head larger than " + std::to_string(max_head) + " bytes");
    if (r.state == ParseState::kError) r.error.status = 502;
    return r;
  }
  r.state = ParseState::kError;
  std::vector<std::string_view> lines;
  if (auto e = split_lines(bytes, s, &lines)) {
    r.error = err(502, "upstream response: " + e->message);
    return r;
  }
  // Status line: HTTP-version SP 3DIGIT SP [reason]; a missing final SP is tolerated.
  const std::string_view line = lines.front();
  HeadError verr;
  const auto minor =
      line.size() >= 12 && line[8] == ' ' ? parse_version(line.substr(0, 8), &verr) : std::nullopt;
  const std::string_view code = line.size() >= 12 ? line.substr(9, 3) : std::string_view{};
  if (!minor ||
      !std::all_of(code.begin(), code.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      code.size() != 3 || code[0] == '0' || (line.size() > 12 && line[12] != ' ')) {
    r.error = err(502, "upstream sent a malformed status line");
    return r;
  }
  const std::string_view reason = line.size() > 13 ? line.substr(13) : std::string_view{};
  for (char c : reason) {
    if (!is_field_byte(static_cast<unsigned char>(c))) {
      r.error = err(502, "upstream sent a control byte in the status line");
      return r;
    }
  }
  if (auto e = parse_fields(lines, &r.head.headers)) {
    r.error = err(502, "upstream response: " + e->message);
    return r;
  }
  r.head.minor_version = *minor;
  r.head.status = (code[0] - '0') * 100 + (code[1] - '0') * 10 + (code[2] - '0');
  r.head.reason = std::string(reason);
  r.state = ParseState::kComplete;
  r.size = s.end;
  return r;
}

TargetParse parse_authority_form(std::string_view target) {
  if (target.find_first_of("/?#@") != std::string_view::npos) {
    return target_error(400, "CONNECT target must be host:port");
  }
  return parse_host_port(target, 0);
}

TargetParse parse_absolute_form(std::string_view target) {
  constexpr std::string_view kHttp = "http://";
  constexpr std::string_view kHttps = "https://";
  if (!target.empty() && target.front() == '/') {
    return target_error(
        400, "origin-form request sent to a proxy: send the absolute URL (http://host/path)");
  }
  if (target.size() >= kHttps.size() && iequals(target.substr(0, kHttps.size()), kHttps)) {
    return target_error(400,
                        "https:// URL sent to an HTTP proxy: use CONNECT (HTTPS_PROXY) for https");
  }
  if (target.size() < kHttp.size() || !iequals(target.substr(0, kHttp.size()), kHttp)) {
    return target_error(
        400, "only http:// URLs can be proxied this way (use CONNECT for anything else)");
  }
  const std::string_view rest = target.substr(kHttp.size());
  const std::size_t auth_end = rest.find_first_of("/?#");
  const std::string_view authority = rest.substr(0, auth_end);
  if (authority.find('@') != std::string_view::npos) {
    return target_error(400, "credentials in the URL (user@host) are not forwarded");
  }
  std::string_view tail =
      auth_end == std::string_view::npos ? std::string_view{} : rest.substr(auth_end);
  if (tail.find('#') != std::string_view::npos)
    return target_error(400, "fragment (#) in the request target");
  TargetParse t = parse_host_port(authority, 80);
  if (!t.ok) return t;
  if (tail.empty()) {
    t.target.origin_form = "/";
  } else if (tail.front() == '?') {
    t.target.origin_form = "/" + std::string(tail);
  } else {
    t.target.origin_form = std::string(tail);
  }
  return t;
}

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

std::string sanitize_phrase(std::string_view s, std::size_t max) {
  std::string out;
  out.reserve(std::min(s.size(), max));
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    out.push_back(u < 0x20 || u == 0x7f ? ' ' : c);
  }
  if (out.size() > max) {
    std::size_t cut = max;
    // Back up to the start of a UTF-8 sequence so the phrase stays valid text.
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    out.resize(cut);
  }
  return out;
}

std::string_view status_text(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 408:
      return "Request Timeout";
    case 431:
      return "Request Header Fields Too Large";
    case 501:
      return "Not Implemented";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Error";
  }
}

std::string refusal_response(std::string_view reason) {
  const std::string phrase = sanitize_phrase(reason);
  const std::string body =
      "Connection blocked by network allowlist: " + sanitize_phrase(reason, 2000) + "\n";
  std::string out = "HTTP/1.1 403 " + (phrase.empty() ? std::string("Forbidden") : phrase) + "\r\n";
  append_field(&out, "X-Proxy-Error", "blocked-by-allowlist");
  append_field(&out, "Content-Type", "text/plain; charset=utf-8");
  append_field(&out, "Content-Length", std::to_string(body.size()));
  append_field(&out, "Connection", "close");
  out.append("\r\n");
  out.append(body);
  return out;
}

std::string error_response(int status, std::string_view error_kind, std::string_view message) {
  const std::string body = sanitize_phrase(message, 2000) + "\n";
  std::string out =
      "HTTP/1.1 " + std::to_string(status) + " " + std::string(status_text(status)) + "\r\n";
  append_field(&out, "X-Proxy-Error", error_kind);
  append_field(&out, "Content-Type", "text/plain; charset=utf-8");
  append_field(&out, "Content-Length", std::to_string(body.size()));
  append_field(&out, "Connection", "close");
  out.append("\r\n");
  out.append(body);
  return out;
}

std::string_view connect_established() { return "HTTP/1.1 200 Connection Established\r\n\r\n"; }

}  // namespace vigil::proxy::http
