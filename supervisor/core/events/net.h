// The network events of schema v1 (docs/events.md): what the proxy decided about one
// request (net.decision) and an allowed connection that then failed upstream
// (net.upstream_failure). One model for every part: the proxy fills these in and emits
// them as they are; the supervisor logs, annotates and replays them; `vigil proxy`
// writes them as schema v1 lines. The parsers and the serialiser are the supervisor's
// event schema (supervisor/core/events/event_schema.h).
//
// Plain values; thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace vigil::events {

enum class NetProto { kHttp, kConnect, kSocks5, kSocks4 };
// A connection's verdict: allowed or denied. Not fs Verdict (core/fs/path_verdict.h),
// whose third value, ephemeral (the write lands on a throwaway tmpfs), has no meaning for
// a connection: a type that cannot hold it keeps every switch over a net verdict
// exhaustive and net.* records refusing "ephemeral" when they are read. The words the two
// share are the same ("allowed", "denied").
enum class NetVerdict { kAllowed, kDenied };

const char* to_string(NetProto p);    // "http" | "connect" | "socks5" | "socks4"
const char* to_string(NetVerdict v);  // "allowed" | "denied"

// net.decision's refused_by: which check refused. The field stays a string in the model
// (a log reader never fails on a value it does not know); these are the values written.
namespace refused_by {
inline constexpr std::string_view kMalformedHost = "malformed-host";  // not canonicalisable
inline constexpr std::string_view kDeniedDomain = "denied-domain";    // a deniedDomains entry
inline constexpr std::string_view kNotAllowed = "not-allowed";        // no allowedDomains entry
inline constexpr std::string_view kAddressGuard = "address-guard";    // every address refused
// SOCKS4: nothing was decided, the client was told to use SOCKS5.
inline constexpr std::string_view kUnsupportedProtocol = "unsupported-protocol";
// network.refuseOpaqueTunnels: a tunnel the proxy could not see into.
inline constexpr std::string_view kOpaqueTunnel = "opaque-tunnel";
// network.tlsTerminate.maxTunnels: as many terminated tunnels as allowed are open.
inline constexpr std::string_view kTooManyTunnels = "too-many-tunnels";
}  // namespace refused_by

struct NetDecision {
  NetProto proto = NetProto::kHttp;
  // Canonical host (IPv6 without brackets); for a malformed host, the bytes the client
  // sent (capped at 300).
  std::string host;
  std::uint16_t port = 0;
  NetVerdict verdict = NetVerdict::kDenied;
  std::string rule;    // the settings entry that decided, as written; "" = default deny
  std::string reason;  // model-facing, one line
  // Optional detail from the proxy ("" = absent).
  std::string refused_by;  // one of refused_by::k*; "" when allowed
  // Allowed: the address connected to (a later one when the first that passed the guard
  // refused the connect; the first one when none answered). Address-guard refusal: the
  // first address refused. Otherwise empty.
  std::string address;
  std::string guard_check;  // address-guard refusals: "loopback", "metadata", ...
  // Set by the supervisor, never by the proxy: a denied connection's ignoreViolations
  // entry ("" = none).
  std::string ignored;
  // Set by the supervisor: the verdict's rule id with its place in the settings
  // (`network.allowedDomains[0] "*.github.com"`: supervisor/report/policy_judge.h). "" in older
  // logs.
  std::string rule_id = {};
  // vigil.network.capture: the connection was made by a program that ignored the proxy
  // settings, its connect() trapped and carried through the proxy by vigil-init
  // (observer/inet_broker.h), and `program` is that caller's name as vigil-init read it
  // (/proc/PID/comm and exe). Both come only from the proxy's capture listener, which
  // only vigil-init reaches.
  bool captured = false;
  std::string program = {};

  bool allowed() const { return verdict == NetVerdict::kAllowed; }
  bool operator==(const NetDecision&) const = default;
};

// An allowed connection that failed upstream (DNS, connect refused, timeout). Not a
// policy decision: reported so a session log explains a 502.
struct NetUpstreamFailure {
  NetProto proto = NetProto::kHttp;
  std::string host;
  std::uint16_t port = 0;
  std::string address;  // "" when resolution failed
  std::string what;     // "could not resolve (no such host)", "connection refused", ...
  bool operator==(const NetUpstreamFailure&) const = default;
};

// One request inside a TLS tunnel the proxy terminated (net.request): what was sent where.
// Never a secret: the path's query values are redacted, and whether a masked credential
// was swapped in is a flag, never the value.
struct NetRequest {
  std::string method;
  std::string host;
  std::uint16_t port = 0;
  std::string path;  // query values "[redacted]"
  int status = 0;    // the response's (or the proxy's own refusal's)
  std::uint64_t bytes_up = 0;    // request body bytes forwarded
  std::uint64_t bytes_down = 0;  // response body bytes forwarded
  bool secret_injected = false;
  NetVerdict verdict = NetVerdict::kAllowed;
  std::string rule;    // the request rule that decided ("" = no rule names the host)
  std::string reason;  // refusals: one line for the model, with the rule to add
  bool operator==(const NetRequest&) const = default;
};

}  // namespace vigil::events
