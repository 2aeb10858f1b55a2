#include "proxy/address_guard.h"

#include <algorithm>
#include <array>
#include <optional>

#include "proxy/host_canon.h"

namespace vigil::proxy {
namespace {

namespace ip = boost::asio::ip;

// Instance-metadata and cloud platform endpoints. 169.254.169.254 is link-local and
// would be refused anyway, but several clouds serve theirs where no other category
// reaches: Alibaba inside CGNAT space, Azure's WireServer at a public address, Oracle
// Classic in 192.0.0.0/24, and every IPv6 one in unique-local space (fc00::/7), which
// passes like any private network. An allowed name whose DNS the sandboxed command
// controls (a wildcard entry, a dynamic-DNS name) can point at any of them. Where a
// provider documents a service block rather than one address, the block is listed.
constexpr std::array<std::string_view, 10> kMetadataEndpoints = {
    "169.254.169.254",     // AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle, ... (IPv4)
    "100.100.100.200",     // Alibaba Cloud
    "168.63.129.16",       // Azure WireServer (host platform; serves VM extension secrets)
    "192.0.0.192",         // Oracle Cloud Classic
    "fd00:ec2::/32",       // AWS IPv6 services: IMDS ::254, DNS ::253, NTP ::123, EKS ::23
    "fd20:ce::254",        // Google Cloud
    "fd00:c1::a9fe:a9fe",  // Oracle Cloud Infrastructure
    "fd00:42::42",         // Scaleway
    "fd00:a9fe:a9fe::1",   // Akamai / Linode
    "fd00:100::100:200",   // Alibaba Cloud
};

std::optional<IpAddress> parse_ip(std::string_view text) {
  std::string s(text);
  if (s.size() >= 2 && s.front() == '[' && s.back() == ']') s = s.substr(1, s.size() - 2);
  boost::system::error_code ec;
  const IpAddress a = ip::make_address(s, ec);
  if (ec) return std::nullopt;
  if (a.is_v6() && a.to_v6().scope_id() != 0) return std::nullopt;  // "%eth0": no zones
  return a;
}

std::array<unsigned char, 16> bytes16(const IpAddress& a) {
  std::array<unsigned char, 16> out{};
  if (a.is_v4()) {
    const auto b = a.to_v4().to_bytes();
    std::copy(b.begin(), b.end(), out.begin());
  } else {
    const auto b = a.to_v6().to_bytes();
    std::copy(b.begin(), b.end(), out.begin());
  }
  return out;
}

bool prefix_equal(const IpAddress& a, const IpAddress& b, unsigned prefix) {
  const auto x = bytes16(a);
  const auto y = bytes16(b);
  unsigned full = prefix / 8;
  for (unsigned i = 0; i < full; ++i) {
    if (x[i] != y[i]) return false;
  }
  const unsigned bits = prefix % 8;
  if (bits == 0) return true;
  const auto mask = static_cast<unsigned char>(0xFF << (8 - bits));
  return (x[full] & mask) == (y[full] & mask);
}

IpAddress masked(const IpAddress& a, unsigned prefix) {
  auto b = bytes16(a);
  const unsigned width = a.is_v4() ? 32 : 128;
  for (unsigned bit = prefix; bit < width; ++bit) {
    b[bit / 8] = static_cast<unsigned char>(b[bit / 8] & ~(0x80 >> (bit % 8)));
  }
  if (a.is_v4()) return ip::address_v4(ip::address_v4::bytes_type{b[0], b[1], b[2], b[3]});
  ip::address_v6::bytes_type v6{};
  std::copy(b.begin(), b.end(), v6.begin());
  return ip::address_v6(v6);
}

bool same_address(const IpAddress& a, const IpAddress& b) {
  if (a.is_v4() != b.is_v4()) return false;
  return bytes16(a) == bytes16(b);
}

// The built-in category of a plain IPv4 address, host byte order.
GuardCheck v4_category(std::uint32_t a) {
  const auto in = [a](std::uint32_t net, unsigned prefix) {
    const std::uint32_t mask = prefix == 0 ? 0 : ~std::uint32_t{0} << (32 - prefix);
    return (a & mask) == net;
  };
  if (in(0x7F000000u, 8)) return GuardCheck::kLoopback;
  if (in(0x00000000u, 8)) return GuardCheck::kUnspecified;  // 0.x.x.x dials this host on Linux
  if (in(0xA9FE0000u, 16)) return GuardCheck::kLinkLocal;
  if (in(0xE0000000u, 4)) return GuardCheck::kMulticast;
  if (in(0xF0000000u, 4)) return GuardCheck::kReserved;  // includes 255.255.255.255
  return GuardCheck::kPass;
}

GuardCheck v6_category(const ip::address_v6& a) {
  const auto b = a.to_bytes();
  if (a.is_loopback()) return GuardCheck::kLoopback;
  if (a.is_unspecified()) return GuardCheck::kUnspecified;
  if (b[0] == 0xFE && (b[1] & 0xC0) == 0x80) return GuardCheck::kLinkLocal;  // fe80::/10
  if (b[0] == 0xFF) return GuardCheck::kMulticast;
  return GuardCheck::kPass;
}

std::string describe(GuardCheck c) {
  switch (c) {
    case GuardCheck::kPass:
      return "allowed";
    case GuardCheck::kMetadata:
      return "a cloud metadata endpoint";
    case GuardCheck::kLoopback:
      return "a loopback address";
    case GuardCheck::kUnspecified:
      return "an unspecified address (it reaches this machine)";
    case GuardCheck::kLinkLocal:
      return "a link-local address";
    case GuardCheck::kMulticast:
      return "a multicast address";
    case GuardCheck::kReserved:
      return "a reserved or broadcast address";
    case GuardCheck::kHostAddress:
      return "one of this machine's own addresses";
    case GuardCheck::kDeniedBlock:
      return "a denied address";
    case GuardCheck::kHostAddressesUnknown:
      return "possibly one of this machine's own addresses: they could not be listed";
  }
  return "refused";
}

// The checks for one address (the address itself, or the IPv4 an IPv6 embeds).
GuardVerdict check_one(const IpAddress& a, const GuardContext& ctx, bool explicit_ip) {
  GuardVerdict v;
  for (const auto& block : ctx.denied) {
    if (block_contains(block, a)) {
      v.check = GuardCheck::kDeniedBlock;
      v.why = "in " + block.origin + " (" + block.entry + ")";
      return v;
    }
  }
  if (explicit_ip) return v;
  // Metadata first: the most specific answer for an address that is also link-local.
  GuardCheck c = GuardCheck::kPass;
  for (const auto& block : builtin_metadata_blocks()) {
    if (block_contains(block, a)) c = GuardCheck::kMetadata;
  }
  for (const auto& m : ctx.extra_metadata) {
    if (same_address(m, a)) c = GuardCheck::kMetadata;
  }
  if (c == GuardCheck::kPass) {
    c = a.is_v4() ? v4_category(a.to_v4().to_uint()) : v6_category(a.to_v6());
  }
  if (c == GuardCheck::kPass) {
    for (const auto& h : ctx.host_addresses) {
      if (same_address(h, a)) c = GuardCheck::kHostAddress;
    }
    if (!ctx.host_addresses_error.empty()) c = GuardCheck::kHostAddressesUnknown;
  }
  const bool loopback_like =
      c == GuardCheck::kLoopback || (c == GuardCheck::kHostAddress && a.is_loopback());
  if (ctx.allow_loopback && loopback_like) c = GuardCheck::kPass;
  v.check = c;
  if (c != GuardCheck::kPass) v.why = describe(c);
  if (c == GuardCheck::kHostAddressesUnknown) {
    v.why += " (" + ctx.host_addresses_error + ")";
  }
  return v;
}

}  // namespace

Result<AddressBlock> parse_address_block(std::string_view text) {
  const std::size_t slash = text.find('/');
  const auto addr = parse_ip(text.substr(0, slash));
  const std::string quoted = quote_for_message(text);
  if (!addr) {
    return make_error(
        Errc::kInvalidPolicy,
        quoted + ": not an IP address or CIDR block (write 10.0.0.0/8, 192.168.1.5 or fd00::/8)");
  }
  const unsigned width = addr->is_v4() ? 32 : 128;
  unsigned prefix = width;
  if (slash != std::string_view::npos) {
    const std::string_view p = text.substr(slash + 1);
    if (p.empty() || p.size() > 3 ||
        !std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return make_error(Errc::kInvalidPolicy,
                        quoted + ": the prefix length after / must be a number");
    }
    prefix = 0;
    for (char c : p) prefix = prefix * 10 + static_cast<unsigned>(c - '0');
    if (prefix > width) {
      return make_error(Errc::kInvalidPolicy,
                        quoted + ": prefix length larger than " + std::to_string(width));
    }
  }
  AddressBlock b;
  b.network = masked(*addr, prefix);
  b.prefix = prefix;
  b.entry = std::string(text);
  return b;
}

Result<std::vector<AddressBlock>> parse_denied_resolved_addresses(
    const std::vector<std::string>& entries) {
  std::vector<AddressBlock> out;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string path = "network.deniedResolvedAddresses[" + std::to_string(i) + "]";
    auto b = parse_address_block(entries[i]);
    if (!b) return make_error(Errc::kInvalidPolicy, path + ": " + b.error().message);
    b->origin = path;
    out.push_back(std::move(*b));
  }
  return out;
}

bool block_contains(const AddressBlock& block, const IpAddress& addr) {
  if (block.network.is_v4() != addr.is_v4()) return false;
  return prefix_equal(block.network, addr, block.prefix);
}

const char* to_string(GuardCheck c) {
  switch (c) {
    case GuardCheck::kPass:
      return "pass";
    case GuardCheck::kMetadata:
      return "metadata";
    case GuardCheck::kLoopback:
      return "loopback";
    case GuardCheck::kUnspecified:
      return "unspecified";
    case GuardCheck::kLinkLocal:
      return "link-local";
    case GuardCheck::kMulticast:
      return "multicast";
    case GuardCheck::kReserved:
      return "reserved";
    case GuardCheck::kHostAddress:
      return "host-address";
    case GuardCheck::kDeniedBlock:
      return "denied-block";
    case GuardCheck::kHostAddressesUnknown:
      return "host-addresses-unknown";
  }
  return "unknown";
}

GuardVerdict guard_address(const IpAddress& addr, const GuardContext& ctx, bool explicit_ip) {
  GuardVerdict v = check_one(addr, ctx, explicit_ip);
  if (!v.allowed() || !addr.is_v6()) return v;
  // The IPv4 address an IPv6 one carries is judged too: a mapped or NAT64 address
  // dials it, and for the tunnel forms refusing more is the safe direction.
  const auto canon = canonicalize_host(addr.to_string());
  if (!canon || !canon->embedded_ipv4) return v;
  const auto v4 = parse_ip(*canon->embedded_ipv4);
  if (!v4) return v;
  GuardVerdict inner = check_one(*v4, ctx, explicit_ip);
  if (!inner.allowed()) inner.why += " (it carries " + v4->to_string() + ")";
  return inner;
}

const std::vector<AddressBlock>& builtin_metadata_blocks() {
  static const std::vector<AddressBlock> kBlocks = [] {
    std::vector<AddressBlock> out;
    for (const std::string_view text : kMetadataEndpoints) {
      // Constants: each parses (BuiltinMetadataList checks that none was dropped).
      auto b = parse_address_block(text);
      if (!b) continue;
      b->origin = "the built-in metadata endpoints";
      out.push_back(std::move(*b));
    }
    return out;
  }();
  return kBlocks;
}

}  // namespace vigil::proxy
