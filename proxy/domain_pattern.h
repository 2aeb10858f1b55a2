// One entry of network.allowedDomains / network.deniedDomains, in srt's format, parsed
// and canonicalised once at policy load so that matching is a few string compares.
//
// Grammar (an optional ":port", 1-65535 without leading zeros, may follow any form):
//   example.com              exactly that host (case and one trailing dot ignored)
//   *.example.com            any subdomain at any depth; never the apex, never an IP
//   bedrock.*.amazonaws.com  exactly one label in place of the '*'
//   127.0.0.1, 0x7f.1, [::1] an IP literal, canonicalised like a host (IPv6 in brackets)
//   *                        deniedDomains only: every host (deny-all)
// A wildcard must be a whole label and must have at least two labels after it, so it
// can never span a whole top-level domain ("*.com", "x.*.com").
//
// Pure; no state; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "proxy/host_canon.h"
#include "supervisor/core/base/result.h"

namespace vigil::proxy {

// Which list an entry comes from: only deniedDomains accepts a bare "*" / "*:port", and
// only a deny entry matches the tunnelled spellings (6to4, Teredo) of an IPv4 address.
enum class PatternList { kAllowed, kDenied };

struct DomainPattern {
  enum class Kind {
    kExact,         // host == name
    kAnySubdomain,  // host ends with "." + name
    kMiddleLabel,   // host == prefix + "." + <one label> + "." + name
    kIp,            // host (or the IPv4 it embeds) == ip
    kAll,           // "*": every host (deniedDomains only)
  };
  Kind kind = Kind::kExact;
  std::string entry;   // as written in the settings file: the rule a Decision names
  std::string name;    // kExact: the name; kAnySubdomain/kMiddleLabel: the part after '*.'
  std::string prefix;  // kMiddleLabel: the labels before ".*"
  CanonicalHost ip;    // kIp: the canonical address
  std::optional<std::uint16_t> port;  // matches every port when empty

  // The canonical spelling ("*.example.com:443", "[::1]"), for messages and dumps.
  std::string canonical() const;
};

// Parses one entry. The error (Errc::kInvalidPolicy) reads `"<entry>": <problem>`,
// e.g. `"*.com": a wildcard must cover at least two labels (write *.example.com)`;
// the caller prefixes the JSON path.
Result<DomainPattern> parse_domain_pattern(std::string_view entry, PatternList list);

// Whether `pattern` covers a connection to `host`:`port`.
//  - Name patterns match only names; IP patterns match only IPs.
//  - IP patterns compare canonical text, and also the IPv4 destination: an IPv4, or an
//    IPv6 whose embedding reaches the IPv4 host itself (mapped, compatible, NAT64), so
//    127.0.0.1, [::ffff:127.0.0.1] and [64:ff9b::7f00:1] are one destination.
//  - On the deny list a host's 6to4 and Teredo spellings count too: they only route
//    *through* the IPv4 address, but denying more is the safe direction, and allowing
//    a relay because its address was allowed is not.
bool pattern_matches(const DomainPattern& pattern, PatternList list, const CanonicalHost& host,
                     std::uint16_t port);

}  // namespace vigil::proxy
