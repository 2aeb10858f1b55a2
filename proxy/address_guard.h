// The address guard: after the allowlist has allowed a name and the name has been
// resolved (once), which of the resolved addresses the proxy may connect to. It closes
// the gap an allowlist of names leaves open: an allowed name whose DNS the sandboxed
// command (or anyone else) controls can point at 127.0.0.1, the cloud metadata service
// or this machine's own services.
//
// Refused: loopback, unspecified (0.0.0.0/8 and ::, which reach this machine), link-local,
// multicast, reserved/broadcast (240.0.0.0/4), the cloud metadata endpoints (169.254.169.254
// and those outside link-local space: Alibaba's 100.100.100.200, Azure's 168.63.129.16,
// the IPv6 ones of AWS, Google, Oracle, Scaleway, Akamai and Alibaba; the table is in
// address_guard.cc), whatever metadata.google.internal resolves to, this machine's own
// interface addresses (refused outright when they could not be listed), and the policy's network.deniedResolvedAddresses blocks. An IPv6
// address that carries an IPv4 one (mapped, compatible, NAT64, 6to4, Teredo) is refused
// when either is.
//
// The explicit-IP rule: when the client asked for an IP literal and an allowedDomains
// entry names exactly that IP (the matcher allowed it; name patterns never match IPs),
// the user has said "this address" in so many words, so the built-in categories are not
// applied to it: allowing "127.0.0.1:8080" reaches a local dev server. The policy's own
// deniedResolvedAddresses still apply (deny wins, as for domains).
//
// Pure; no state; safe from any thread.
#pragma once

#include <boost/asio/ip/address.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "supervisor/core/base/result.h"

namespace vigil::proxy {

using IpAddress = boost::asio::ip::address;

// One network.deniedResolvedAddresses entry: an address or a CIDR block.
struct AddressBlock {
  IpAddress network;  // host bits cleared
  unsigned prefix = 0;
  std::string entry;   // as written
  std::string origin;  // JSON path, "network.deniedResolvedAddresses[2]"
};

// "10.0.0.0/8", "fd00::/8", "169.254.169.254", "[::1]", "::ffff:0:0/96". Host bits
// below the prefix are ignored ("10.1.2.3/8" is 10.0.0.0/8), as CIDR parsers usually do.
Result<AddressBlock> parse_address_block(std::string_view text);

// Parses the whole list; the first error names its JSON path.
Result<std::vector<AddressBlock>> parse_denied_resolved_addresses(
    const std::vector<std::string>& entries);

bool block_contains(const AddressBlock& block, const IpAddress& addr);

enum class GuardCheck {
  kPass,
  kMetadata,
  kLoopback,
  kUnspecified,
  kLinkLocal,
  kMulticast,
  kReserved,
  kHostAddress,
  kDeniedBlock,
  // This machine's addresses could not be listed (GuardContext::host_addresses_error):
  // an address is refused rather than assumed not to be one of them.
  kHostAddressesUnknown,
};

// "metadata", "loopback", ... (stable names for events and tests).
const char* to_string(GuardCheck c);

struct GuardContext {
  std::vector<AddressBlock> denied;       // network.deniedResolvedAddresses
  std::vector<IpAddress> host_addresses;  // this machine's interface addresses (getifaddrs)
  // Why host_addresses could not be listed ("" = they were): then every address that the
  // explicit-IP rule does not exempt is refused (kHostAddressesUnknown), never let through
  // because an empty list matched nothing.
  std::string host_addresses_error;
  std::vector<IpAddress> extra_metadata;  // what metadata.google.internal resolved to
  // Test-only (vigil proxy --test-allow-loopback, refused unless VIGIL_TEST_MODE=1):
  // loopback addresses pass, so an integration test can map a name to a server on
  // 127.0.0.1. Every other check stays on.
  bool allow_loopback = false;
};

struct GuardVerdict {
  GuardCheck check = GuardCheck::kPass;
  bool allowed() const { return check == GuardCheck::kPass; }
  // Why, for the refusal text: "a loopback address", "in network.deniedResolvedAddresses[0]
  // (10.0.0.0/8)", with " (it carries 127.0.0.1)" for an IPv6 that embeds an IPv4.
  std::string why;
};

// `explicit_ip` = the client named an IP literal that an allowedDomains entry names
// exactly (see the rule above).
GuardVerdict guard_address(const IpAddress& addr, const GuardContext& ctx,
                           bool explicit_ip = false);

// The built-in metadata endpoints, as blocks (origin "the built-in metadata endpoints").
const std::vector<AddressBlock>& builtin_metadata_blocks();

}  // namespace vigil::proxy
