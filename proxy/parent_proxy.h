// network.parentProxy (srt's key; falling back to the user's HTTP(S)_PROXY/NO_PROXY as
// srt does): vigil's proxy still decides every connection (the allow list, then the
// address guard on what the name resolves to), and an allowed one goes out through the
// parent with CONNECT instead of directly. Pure: the URL and NO_PROXY grammar, the
// CONNECT request and the reading of its answer; connection_upstream.cc does the I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/address_guard.h"
#include "proxy/domain_pattern.h"
#include "proxy/events.h"
#include "supervisor/core/policy/policy.h"
#include "supervisor/core/base/result.h"

namespace vigil::proxy {

struct ProxyEndpoint {
  std::string host;  // a name, or an IP literal (without brackets)
  std::uint16_t port = 0;
  std::string text() const;  // "host:port" ("[v6]:port")
};

// "http://host:port" with an optional trailing "/". No user:password (a secret in a
// settings file or a log), no https:// (TLS to the proxy), no path. Port defaults to 80.
Result<ProxyEndpoint> parse_proxy_url(std::string_view url);

// One NO_PROXY list: comma-separated host suffixes ("example.com", ".example.com",
// "*.example.com" all cover the name and every name below it), IP addresses or CIDR
// blocks, optional ":port"; "*" alone covers everything.
struct NoProxyEntry {
  std::string suffix;                 // names
  std::optional<AddressBlock> block;  // addresses
  std::uint16_t port = 0;             // 0: any
  bool all = false;
};
Result<std::vector<NoProxyEntry>> parse_no_proxy(std::string_view list);

// Whether a destination connects directly: `host` canonical (name or IP literal).
bool no_proxy_matches(const std::vector<NoProxyEntry>& entries, std::string_view host,
                      std::uint16_t port);

struct ParentRoute {
  std::optional<ProxyEndpoint> http;   // absolute-form HTTP requests
  std::optional<ProxyEndpoint> https;  // CONNECT and SOCKS tunnels
  std::vector<NoProxyEntry> no_proxy;
  std::string origin;  // "network.parentProxy" or "environment (HTTPS_PROXY)"
  // The endpoint for a connection of this kind to `host`, or none (direct).
  const ProxyEndpoint* via(NetProto proto, std::string_view host, std::uint16_t port) const;
};

// From the settings (errors name the key: Errc::kInvalidPolicy). Each of http/https
// falls back to the other, as srt does. std::nullopt when nothing is set.
Result<std::optional<ParentRoute>> build_parent_route(const ParentProxySettings& s);

// network.mitmProxy (srt): an allowed connection to one of `domains` goes to the user's
// MITM proxy on a Unix socket, asked with CONNECT for the name the client gave, instead
// of being dialled. That hop resolves the name, and owns the address policy (as srt
// documents: no address guard here). Plain HTTP goes the same way, through a CONNECT.
struct MitmRoute {
  std::string socket_path;
  std::vector<DomainPattern> domains;
  bool covers(const CanonicalHost& host, std::uint16_t port) const;
};
// Errc::kInvalidPolicy naming the entry of a pattern that does not parse.
Result<std::optional<MitmRoute>> build_mitm_route(const std::optional<MitmProxySettings>& s);

// "CONNECT host:port HTTP/1.1\r\nHost: host:port\r\n\r\n" (IPv6 in brackets).
std::string connect_request(std::string_view host, std::uint16_t port);

// The parent's answer head (up to and including the blank line): its status code when
// it is a well-formed HTTP/1.x status line, else an error. Only 2xx opens a tunnel.
Result<int> parse_connect_reply(std::string_view head);

}  // namespace vigil::proxy
