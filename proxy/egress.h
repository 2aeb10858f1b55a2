// The egress decision for one request, in the order issue 5 fixes:
//   1. a malformed host is refused;
//   2. the host is canonicalised (host_canon.h);
//   3. deniedDomains win, 4. allowedDomains allow, 5. everything else is refused;
//   6. after an allow the name is resolved ONCE (by the caller) and every resolved
//      address goes through the address guard (address_guard.h); the caller connects
//      only to an address that passed, never to a second resolution.
// Steps 1-5 are decide_target(), step 6 is choose_addresses(): both pure, so the whole
// decision is table-tested; the server only does the I/O between them.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "proxy/address_guard.h"
#include "proxy/domain_matcher.h"
#include "proxy/events.h"
#include "proxy/host_canon.h"

namespace vigil::proxy {

struct TargetDecision {
  NetDecision event;                  // ready to emit once the address step is done
  std::optional<CanonicalHost> host;  // set unless the host was malformed
  // The client named an IP literal and an allowedDomains entry names exactly that IP:
  // the guard's built-in categories are skipped (see address_guard.h).
  bool explicit_ip = false;

  bool allowed() const { return event.verdict == NetVerdict::kAllowed; }
  // Whether a name must be resolved before connecting (an allowed IP literal is not).
  bool needs_resolution() const {
    return allowed() && host && host->kind == CanonicalHost::Kind::kName;
  }
};

// Steps 1-5. `raw_host` is what the client sent (CONNECT authority, absolute URL, SOCKS5
// name or address), brackets already removed or not.
TargetDecision decide_target(const DomainMatcher& matcher, NetProto proto, std::string_view raw_host,
                             std::uint16_t port);

// The literal address of an allowed IP target (needs_resolution() false).
std::optional<IpAddress> literal_address(const TargetDecision& d);

// Step 6: keeps the resolved addresses that pass the guard, in resolver order. When none
// does, the decision becomes a refusal (refused_by address-guard, the reason naming the
// first address and why). On an allow, event.address is the first passing address.
std::vector<IpAddress> choose_addresses(TargetDecision& d, const std::vector<IpAddress>& resolved,
                                        const GuardContext& guard);

}  // namespace vigil::proxy
