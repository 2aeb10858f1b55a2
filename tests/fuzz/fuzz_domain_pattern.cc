// libFuzzer target for the allowlist entry parser and matcher. The input is an entry,
// optionally followed by '\n' and a host to match it against. Checks:
//  - a parsed entry's canonical spelling parses back to the same canonical spelling;
//  - a bare "*" is never accepted on the allow list;
//  - each wildcard form matches the hosts its grammar promises and never the apex;
//  - DomainMatcher::build agrees with parse_domain_pattern, and decide() honours
//    "deny wins" for any host.
// Built only with -DVIGIL_FUZZ=ON and clang (see proxy/CMakeLists.txt).
#include <cstdint>
#include <cstdlib>
#include <string>

#include "proxy/domain_matcher.h"
#include "proxy/domain_pattern.h"
#include "proxy/host_canon.h"

namespace {

using vigil::proxy::CanonicalHost;
using vigil::proxy::DomainPattern;
using vigil::proxy::PatternList;

[[noreturn]] void fail() { std::abort(); }

CanonicalHost host_of(const std::string& s) {
  auto h = vigil::proxy::canonicalize_host(s);
  if (!h.ok()) fail();
  return *h;
}

void check_pattern(const DomainPattern& p, PatternList list) {
  if (list == PatternList::kAllowed && p.kind == DomainPattern::Kind::kAll) fail();
  const auto again = vigil::proxy::parse_domain_pattern(p.canonical(), list);
  if (!again.ok() || again->canonical() != p.canonical() || again->kind != p.kind) fail();

  const std::uint16_t port = p.port.value_or(443);
  const std::uint16_t other = static_cast<std::uint16_t>(port == 1 ? 2 : port - 1);
  switch (p.kind) {
    case DomainPattern::Kind::kExact: {
      const auto h = host_of(p.name);
      if (!vigil::proxy::pattern_matches(p, list, h, port)) fail();
      if (p.port && vigil::proxy::pattern_matches(p, list, h, other)) fail();
      break;
    }
    case DomainPattern::Kind::kAnySubdomain: {
      if (vigil::proxy::pattern_matches(p, list, host_of(p.name), port)) fail();  // never the apex
      const std::string sub = "x." + p.name;
      if (sub.size() <= vigil::proxy::kMaxHostLength &&
          !vigil::proxy::pattern_matches(p, list, host_of(sub), port)) {
        fail();
      }
      break;
    }
    case DomainPattern::Kind::kMiddleLabel: {
      const std::string one = p.prefix + ".x." + p.name;
      const std::string two = p.prefix + ".x.y." + p.name;
      if (one.size() <= vigil::proxy::kMaxHostLength &&
          !vigil::proxy::pattern_matches(p, list, host_of(one), port)) {
        fail();
      }
      if (two.size() <= vigil::proxy::kMaxHostLength &&
          vigil::proxy::pattern_matches(p, list, host_of(two), port)) {
        fail();
      }
      break;
    }
    case DomainPattern::Kind::kIp:
      if (!vigil::proxy::pattern_matches(p, list, p.ip, port)) fail();
      break;
    case DomainPattern::Kind::kAll:
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string in(reinterpret_cast<const char*>(data), size);
  const auto nl = in.find('\n');
  const std::string entry = in.substr(0, nl);
  const std::string host_text = nl == std::string::npos ? std::string() : in.substr(nl + 1);

  for (PatternList list : {PatternList::kAllowed, PatternList::kDenied}) {
    const auto p = vigil::proxy::parse_domain_pattern(entry, list);
    if (p.ok()) {
      check_pattern(*p, list);
    } else if (p.error().message.empty()) {
      fail();
    }
  }

  // The same entry on both lists: whatever the host, a match is a deny by that entry.
  const auto m = vigil::proxy::DomainMatcher::build({entry}, {entry}, {});
  const bool parses = vigil::proxy::parse_domain_pattern(entry, PatternList::kAllowed).ok();
  if (m.ok() != parses) fail();
  if (m.ok() && nl != std::string::npos) {
    const auto h = vigil::proxy::canonicalize_host(host_text);
    if (h.ok()) {
      for (std::uint16_t port : {std::uint16_t{22}, std::uint16_t{443}}) {
        const auto d = m->decide(*h, port);
        if (d.verdict == vigil::events::NetVerdict::kAllowed) fail();
        if (!d.rule.empty() && d.rule != entry) fail();
        if (d.reason.empty()) fail();
      }
    }
  }
  return 0;
}
