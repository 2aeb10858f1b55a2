// What the proxy (inside vigil) and vigil-tls (the TLS helper, proxy/tls_helper_main.cc)
// say to each other over their one SOCK_SEQPACKET socketpair, one JSON object a message:
//   vigil -> helper, first:   the configuration (the sentinel table with real values,
//                             request rules, the upstream trust anchor in test mode)
//   helper -> vigil, answer:  {"ca": PEM} (the session CA's certificate, never its key)
//   vigil -> helper, then:    {"host", "port"} with two descriptors (SCM_RIGHTS): the
//                             client's end of a CONNECT tunnel answered 200, and the
//                             upstream connection the proxy made after its decision
//   helper -> vigil, then:    {"kind": "net.request", ...} one per request (never a
//                             secret: method, host, redacted path, status, byte counts)
// The helper is vigil's own child, so its messages are trusted for their framing, and
// still parsed with bounds.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/credential_sentinels.h"
#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/core/events/net.h"
#include "supervisor/core/policy/credentials_policy.h"

namespace vigil::proxy::tlswire {

inline constexpr std::size_t kMaxMessage = 1 << 20;
// helper -> vigil when a tunnel it was handed has ended (for tlsTerminate.maxTunnels).
inline constexpr std::string_view kTunnelEnded = R"({"kind":"tunnel.end"})";

struct HelperConfig {
  std::vector<SentinelEntry> sentinels;
  std::vector<RequestRule> rules;
  std::vector<AwsPair> aws_pairs;
  Sigv4Shapes sigv4;
  bool require_host_match = false;
  std::uint32_t handshake_timeout_ms = 10'000;
  std::string upstream_ca_file;  // test mode only: an extra anchor for upstream servers
};

std::string encode_config(const HelperConfig& c);
Result<HelperConfig> decode_config(std::string_view text);

struct Tunnel {
  std::string host;
  std::uint16_t port = 0;
};
std::string encode_tunnel(const Tunnel& t);
Result<Tunnel> decode_tunnel(std::string_view text);

std::string encode_request(const events::NetRequest& r);
Result<events::NetRequest> decode_request(std::string_view text);

// One message with `fds` attached. Blocking unless the socket is not.
Result<void> send_message(int sock, std::string_view msg, std::span<const int> fds = {});
// One message, and the descriptors that came with it (CLOEXEC). An empty string at EOF.
Result<std::string> recv_message(int sock, std::vector<UniqueFd>* fds = nullptr,
                                 std::size_t max = kMaxMessage);

}  // namespace vigil::proxy::tlswire
