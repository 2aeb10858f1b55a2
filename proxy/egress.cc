#include "proxy/egress.h"

#include <boost/asio/ip/address.hpp>

namespace vigil::proxy {

TargetDecision decide_target(const DomainMatcher& matcher, NetProto proto, std::string_view raw_host,
                             std::uint16_t port) {
  TargetDecision d;
  d.event.proto = proto;
  d.event.port = port;
  auto canon = detail::canonicalize_host_unquoted(raw_host);
  if (!canon) {
    d.event.host = std::string(raw_host.substr(0, 300));
    d.event.verdict = NetVerdict::kDenied;
    d.event.refused_by = refused_by::kMalformedHost;
    d.event.reason = "malformed host: " + canon.error().message;
    return d;
  }
  if (port == 0) {
    d.event.host = canon->text;
    d.event.refused_by = refused_by::kMalformedHost;
    d.event.reason = "port 0 is not a destination";
    return d;
  }
  d.host = std::move(*canon);
  d.event.host = d.host->text;
  const Decision m = matcher.decide(*d.host, port);
  d.event.verdict = m.verdict;
  d.event.rule = m.rule;
  d.event.reason = m.reason;
  if (m.verdict == NetVerdict::kDenied) {
    d.event.refused_by = m.rule.empty() ? refused_by::kNotAllowed : refused_by::kDeniedDomain;
  } else {
    // Name patterns never match an IP, and "*" exists only on the deny list, so an
    // allowed IP literal was allowed by an entry naming that IP.
    d.explicit_ip = d.host->kind != CanonicalHost::Kind::kName;
  }
  return d;
}

std::optional<IpAddress> literal_address(const TargetDecision& d) {
  if (!d.host || d.host->kind == CanonicalHost::Kind::kName) return std::nullopt;
  boost::system::error_code ec;
  const IpAddress a = boost::asio::ip::make_address(d.host->text, ec);
  if (ec) return std::nullopt;
  return a;
}

std::vector<IpAddress> choose_addresses(TargetDecision& d, const std::vector<IpAddress>& resolved,
                                        const GuardContext& guard) {
  std::vector<IpAddress> passing;
  std::optional<GuardVerdict> first_refusal;
  std::string first_refused;
  for (const auto& a : resolved) {
    const GuardVerdict v = guard_address(a, guard, d.explicit_ip);
    if (v.allowed()) {
      passing.push_back(a);
    } else if (!first_refusal) {
      first_refusal = v;
      first_refused = a.to_string();
    }
  }
  if (!passing.empty()) {
    d.event.address = passing.front().to_string();
    return passing;
  }
  d.event.verdict = NetVerdict::kDenied;
  d.event.refused_by = refused_by::kAddressGuard;
  if (first_refusal) {
    d.event.address = first_refused;
    d.event.guard_check = to_string(first_refusal->check);
    const bool literal = d.host && d.host->kind != CanonicalHost::Kind::kName;
    d.event.reason = literal ? "address guard: " + first_refused + " is " + first_refusal->why
                             : "address guard: " + d.event.host + " resolves to " + first_refused +
                                   ", " + first_refusal->why;
  } else {
    d.event.reason = "address guard: no address to connect to";
  }
  return passing;
}

}  // namespace vigil::proxy
