#include "proxy/host_canon.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cstring>

namespace vigil::proxy {
namespace {

constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }
constexpr bool is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
constexpr bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
// '_' is not a hostname character by RFC 952, but real DNS records use it (_dmarc,
// _acme-challenge) and resolvers look such names up, so it is accepted.
constexpr bool is_label_char(char c) { return is_alpha(c) || is_digit(c) || c == '-' || c == '_'; }
constexpr char to_lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}
constexpr int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

Error invalid(std::string problem) { return make_error(Errc::kInvalidPolicy, std::move(problem)); }

// One inet_aton part: decimal, 0-prefixed octal, or 0x-prefixed hex. nullopt when it is
// malformed or above 2^32-1 (glibc's strtoul would return ERANGE or exceed the mask).
std::optional<std::uint64_t> parse_aton_part(std::string_view p) {
  if (p.empty()) return std::nullopt;
  unsigned base = 10;
  if (p.size() >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
    base = 16;
    p.remove_prefix(2);
    if (p.empty()) return std::nullopt;  // "0x" alone: inet_aton rejects it
  } else if (p.size() >= 2 && p[0] == '0') {
    base = 8;
    p.remove_prefix(1);
  }
  std::uint64_t v = 0;
  for (char c : p) {
    unsigned d = 0;
    if (base == 16) {
      if (!is_hex(c)) return std::nullopt;
      d = static_cast<unsigned>(hex_value(c));
    } else {
      if (!is_digit(c)) return std::nullopt;
      d = static_cast<unsigned>(c - '0');
      if (d >= base) return std::nullopt;  // '8'/'9' in an octal part
    }
    v = v * base + d;
    if (v > 0xffffffffULL) return std::nullopt;  // stop before the accumulator can wrap
  }
  return v;
}

}  // namespace

// The last label decides whether a host is a number: WHATWG URL's "ends in a number"
// rule. A name whose last label is all digits (or 0x-hex) is never a DNS name we would
// want to look up, and the resolver may read it numerically, so it must be a valid IPv4.
bool detail::ends_in_number(std::string_view host) {
  const auto dot = host.rfind('.');
  std::string_view last = dot == std::string_view::npos ? host : host.substr(dot + 1);
  if (last.empty()) return false;
  if (last.size() >= 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X')) {
    for (char c : last.substr(2)) {
      if (!is_hex(c)) return false;
    }
    return true;
  }
  for (char c : last) {
    if (!is_digit(c)) return false;
  }
  return true;
}

std::optional<std::string> detail::name_label_problem(std::string_view label) {
  if (label.empty()) return "empty label (two dots in a row, or a leading dot)";
  if (label.size() > kMaxLabelLength) return "a label is longer than 63 characters";
  for (char c : label) {
    if (!is_label_char(c)) return "invalid character " + quote_for_message(std::string_view(&c, 1));
  }
  return std::nullopt;
}

std::string detail::ascii_lower(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) out += to_lower(c);
  return out;
}

namespace {

std::uint32_t be32(const unsigned char* p) {
  return (static_cast<std::uint32_t>(p[0]) << 24) | (static_cast<std::uint32_t>(p[1]) << 16) |
         (static_cast<std::uint32_t>(p[2]) << 8) | static_cast<std::uint32_t>(p[3]);
}

bool all_zero(const unsigned char* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    if (p[i] != 0) return false;
  }
  return true;
}

struct Embedded {
  Ipv4Embedding kind = Ipv4Embedding::kNone;
  std::uint32_t addr = 0;
};

// Finds the IPv4 address an IPv6 one carries, by prefix. Ordered from most to least
// specific so ::ffff:x is "mapped", not "compatible".
Embedded find_embedded_ipv4(const std::array<unsigned char, 16>& a) {
  const unsigned char* b = a.data();
  if (all_zero(b, 10) && b[10] == 0xff && b[11] == 0xff) {
    return {Ipv4Embedding::kMapped, be32(b + 12)};
  }
  if (all_zero(b, 12)) {
    const std::uint32_t v4 = be32(b + 12);
    // :: and ::1 are IPv6's own unspecified and loopback addresses, not IPv4 carriers.
    if (v4 <= 1) return {};
    return {Ipv4Embedding::kCompatible, v4};
  }
  if (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && all_zero(b + 4, 8)) {
    return {Ipv4Embedding::kNat64, be32(b + 12)};
  }
  if (b[0] == 0x20 && b[1] == 0x02) {
    return {Ipv4Embedding::k6to4, be32(b + 2)};
  }
  if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x00 && b[3] == 0x00) {
    return {Ipv4Embedding::kTeredo, be32(b + 12) ^ 0xffffffffU};
  }
  return {};
}

Result<CanonicalHost> canonicalize_ipv6(std::string_view s) {
  if (s.find('%') != std::string_view::npos) {
    return invalid("IPv6 zone ids (%...) are not accepted");
  }
  // inet_pton needs a terminated string; IPv6 text is at most 45 characters.
  if (s.size() > 45) return invalid("not a valid IPv6 address");
  char buf[64];
  std::memcpy(buf, s.data(), s.size());
  buf[s.size()] = '\0';
  std::array<unsigned char, 16> addr{};
  if (inet_pton(AF_INET6, buf, addr.data()) != 1) return invalid("not a valid IPv6 address");
  char out[INET6_ADDRSTRLEN];
  if (inet_ntop(AF_INET6, addr.data(), out, sizeof out) == nullptr) {
    return invalid("not a valid IPv6 address");
  }
  CanonicalHost h;
  h.kind = CanonicalHost::Kind::kIPv6;
  h.text = out;
  const Embedded e = find_embedded_ipv4(addr);
  if (e.kind != Ipv4Embedding::kNone) {
    h.embedding = e.kind;
    h.embedded_ipv4 = format_ipv4(e.addr);
  }
  return h;
}

// Characters that are never part of a host, with the reason a user should read. Checked
// before anything else so a smuggling attempt ("evil.com\0.good.com", "good.com@evil")
// gets a precise message rather than "bad label".
std::optional<std::string> forbidden_byte_problem(std::string_view s) {
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u == 0) return "contains a NUL byte";
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
      return "contains whitespace";
    }
    if (u < 0x20 || u == 0x7f) return "contains a control character";
    if (u >= 0x80)
      return "contains a non-ASCII byte (write internationalised names as punycode, xn--...)";
    if (c == '@') return "contains '@' (user info is not part of a host)";
    if (c == '/' || c == '\\') return "contains a path separator (a host is not a URL)";
  }
  return std::nullopt;
}

}  // namespace

bool embedding_reaches_ipv4_host(Ipv4Embedding e) {
  return e == Ipv4Embedding::kMapped || e == Ipv4Embedding::kCompatible ||
         e == Ipv4Embedding::kNat64;
}

std::optional<std::uint32_t> parse_inet_aton(std::string_view s) {
  std::array<std::uint64_t, 4> parts{};
  std::size_t n = 0;
  while (true) {
    if (n == parts.size()) return std::nullopt;  // a fifth part
    const auto dot = s.find('.');
    const auto part = parse_aton_part(s.substr(0, dot));
    if (!part) return std::nullopt;
    parts[n++] = *part;
    if (dot == std::string_view::npos) break;
    s.remove_prefix(dot + 1);
  }
  // Every part but the last is one byte; the last fills what remains (a.b.c: c is 16
  // bits, a.b: b is 24 bits, a: 32 bits).
  static constexpr std::array<std::uint64_t, 4> kLastMax = {0xffffffff, 0xffffff, 0xffff, 0xff};
  if (parts[n - 1] > kLastMax[n - 1]) return std::nullopt;
  std::uint64_t addr = 0;
  for (std::size_t i = 0; i + 1 < n; ++i) {
    if (parts[i] > 0xff) return std::nullopt;
    addr |= parts[i] << (24 - 8 * i);
  }
  addr |= parts[n - 1];
  return static_cast<std::uint32_t>(addr);
}

std::string format_ipv4(std::uint32_t a) {
  std::string s;
  for (int shift = 24; shift >= 0; shift -= 8) {
    if (!s.empty()) s += '.';
    s += std::to_string((a >> shift) & 0xffU);
  }
  return s;
}

std::string quote_for_message(std::string_view s) {
  // Long inputs are cut: the message is for a person, the whole text is not needed.
  constexpr std::size_t kMaxShown = 120;
  const bool cut = s.size() > kMaxShown;
  if (cut) s = s.substr(0, kMaxShown);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u >= 0x7f) {
      out += "\\u00";
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    } else {
      out += c;
    }
  }
  out += cut ? "...\"" : "\"";
  return out;
}

namespace detail {

Result<CanonicalHost> canonicalize_host_unquoted(std::string_view raw) {
  if (raw.empty()) return invalid("empty host");
  if (auto p = forbidden_byte_problem(raw)) return invalid(*p);

  // Brackets: only around a whole IPv6 address. "[::1]:443" is a host with a port.
  if (raw.front() == '[') {
    const auto close = raw.find(']');
    if (close == std::string_view::npos) return invalid("'[' without a matching ']'");
    const std::string_view inner = raw.substr(1, close - 1);
    if (inner.find('[') != std::string_view::npos) return invalid("nested brackets");
    if (close + 1 != raw.size()) {
      return invalid(raw[close + 1] == ':' ? "contains a port (give the port separately)"
                                           : "text after ']'");
    }
    if (inner.find(':') == std::string_view::npos) {
      return invalid("brackets are only for IPv6 addresses");
    }
    return canonicalize_ipv6(inner);
  }
  if (raw.find_first_of("[]") != std::string_view::npos) return invalid("unbalanced brackets");

  const auto colons = static_cast<std::size_t>(std::count(raw.begin(), raw.end(), ':'));
  if (colons == 1) return invalid("contains a port (give the port separately)");
  if (colons > 1) return canonicalize_ipv6(raw);
  if (raw.find('%') != std::string_view::npos) return invalid("contains '%'");

  std::string_view host = raw;
  if (host.back() == '.') host.remove_suffix(1);  // the root label: "example.com." is example.com
  if (host.empty()) return invalid("empty host");
  if (host.size() > kMaxHostLength) return invalid("longer than 253 characters");

  // Labels first, so "a..b" and "*" get their own message whatever the last label is.
  std::size_t start = 0;
  while (start <= host.size()) {
    auto end = host.find('.', start);
    if (end == std::string_view::npos) end = host.size();
    if (auto p = name_label_problem(host.substr(start, end - start))) return invalid(*p);
    start = end + 1;
  }

  if (ends_in_number(host)) {
    const auto v4 = parse_inet_aton(host);
    if (!v4) return invalid("ends in a number but is not a valid IPv4 address");
    CanonicalHost h;
    h.kind = CanonicalHost::Kind::kIPv4;
    h.text = format_ipv4(*v4);
    return h;
  }

  CanonicalHost h;
  h.kind = CanonicalHost::Kind::kName;
  h.text = ascii_lower(host);
  return h;
}

}  // namespace detail

Result<CanonicalHost> canonicalize_host(std::string_view raw) {
  auto r = detail::canonicalize_host_unquoted(raw);
  if (r.ok()) return r;
  return invalid("host " + quote_for_message(raw) + ": " + r.error().message);
}

}  // namespace vigil::proxy
