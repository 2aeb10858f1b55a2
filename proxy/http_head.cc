// Request and response heads: where a head ends (scanned once per byte across reads),
// its lines, fields and version, strictly (see http_head.h for why).
#include "proxy/http_head.h"

#include <algorithm>
#include <array>
#include <optional>

#include "proxy/http_text.h"

namespace vigil::proxy::http {
namespace {

using detail::err;
using detail::trim_ows;

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

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

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

}  // namespace vigil::proxy::http
