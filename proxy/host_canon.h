// Host canonicalisation for the egress proxy: one spelling per destination, so that the
// allow/deny lists are compared against what the kernel will actually dial and not
// against whatever text the sandboxed client chose to send.
//
// Pure: no DNS, no sockets, no locale, no globals; safe to call from any thread.
// Nothing here throws (allocation failure aside).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "supervisor/core/base/result.h"

namespace vigil::proxy {

// How an IPv4 address is carried inside an IPv6 one. The distinction matters to the
// matcher: a translation reaches the IPv4 host itself, a tunnel only goes *through* it.
enum class Ipv4Embedding {
  kNone,
  kMapped,      // ::ffff:a.b.c.d       (a dual-stack socket dials a.b.c.d itself)
  kCompatible,  // ::a.b.c.d            (deprecated; tunnelled to a.b.c.d)
  kNat64,       // 64:ff9b::a.b.c.d     (RFC 6052 well-known prefix; translated to a.b.c.d)
  k6to4,        // 2002:AABB:CCDD::/48  (relay; a.b.c.d is the site's router)
  kTeredo,      // 2001:0::/32          (client's public IPv4, bits 96-127 XOR 0xffffffff)
};

// True for the embeddings whose traffic ends at the IPv4 host itself (mapped,
// compatible, NAT64). 6to4 and Teredo only route through that address.
bool embedding_reaches_ipv4_host(Ipv4Embedding e);

struct CanonicalHost {
  enum class Kind { kName, kIPv4, kIPv6 };
  Kind kind = Kind::kName;
  // kName: lower-case labels, no trailing dot.  kIPv4: dotted quad ("127.0.0.1").
  // kIPv6: inet_ntop form without brackets ("::1", "::ffff:127.0.0.1").
  std::string text;
  // kIPv6 only: the IPv4 address it embeds (dotted quad), judged as that IPv4 too.
  std::optional<std::string> embedded_ipv4;
  Ipv4Embedding embedding = Ipv4Embedding::kNone;

  friend bool operator==(const CanonicalHost&, const CanonicalHost&) = default;
};

// Limits from RFC 1035 (253 characters of name without the root dot, 63 per label).
inline constexpr std::size_t kMaxHostLength = 253;
inline constexpr std::size_t kMaxLabelLength = 63;

// Canonicalises a host as a client sent it (HTTP CONNECT target / Host / SOCKS5 name,
// *without* a port). Accepts:
//   - names: ASCII letters, digits, '-', '_' in labels of 1..63 characters; lower-cased;
//     ONE trailing dot stripped. Non-ASCII (un-punycoded IDN) is rejected.
//   - IPv4 in every form inet_aton(3) accepts (1 to 4 parts, each decimal, octal with a
//     leading 0, or hex with 0x), written back as a dotted quad. A host whose last label
//     looks numeric must be a valid IPv4 address, so "256.1.1.1" or "08.1.1.1" is an
//     error rather than a name the resolver might still read as a number.
//   - IPv6, bare or in brackets; zone ids ("%eth0") are rejected.
// Errors are Errc::kInvalidPolicy with a short message naming the problem; the input is
// quoted JSON-style so control bytes cannot reach a log or terminal raw.
Result<CanonicalHost> canonicalize_host(std::string_view raw);

// Parses an IPv4 address in inet_aton's grammar. Returns the address in host byte order.
// Exposed for the pattern parser and the tests.
std::optional<std::uint32_t> parse_inet_aton(std::string_view s);

// "a.b.c.d" for an address in host byte order.
std::string format_ipv4(std::uint32_t addr);

// Quotes text for an error message: JSON string syntax, non-printable bytes as \u00XX.
std::string quote_for_message(std::string_view s);

}  // namespace vigil::proxy

namespace vigil::proxy::detail {
// canonicalize_host with an error message that is only the problem ("empty label"),
// for callers that quote a larger text (a whole allowlist entry) themselves.
Result<CanonicalHost> canonicalize_host_unquoted(std::string_view raw);

// The problem with one name label ("a label is longer than 63 characters"), if any.
std::optional<std::string> name_label_problem(std::string_view label);

// WHATWG URL's "ends in a number": the last label is all digits or 0x-hex. Such a host
// is an IPv4 address or an error, never a name.
bool ends_in_number(std::string_view host);

// ASCII lower-case copy.
std::string ascii_lower(std::string_view s);
}  // namespace vigil::proxy::detail
