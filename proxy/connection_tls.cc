// A CONNECT tunnel handed to vigil-tls (tls_handoff.h) instead of relayed: once the
// client's first byte shows a TLS handshake, both ends go to the helper, which terminates
// the client's TLS with a session leaf and opens a verified one upstream.
#include <sys/socket.h>

#include "proxy/connection.h"

namespace vigil::proxy {

void Connection::refuse_if_opaque(TargetDecision& d, bool socks) const {
  const ServerOptions& o = srv_->options();
  if (!d.allowed()) return;
  const bool terminated = !socks && o.tls && d.host && o.tls->terminates(*d.host, d.event.port);
  if (terminated && o.tls->full()) {
    d.event.verdict = NetVerdict::kDenied;
    d.event.refused_by = std::string(refused_by::kTooManyTunnels);
    d.event.reason = "network.tlsTerminate.maxTunnels: as many TLS tunnels as allowed are "
                     "open; close one, or raise maxTunnels";
    return;
  }
  if (!o.refuse_opaque_tunnels) return;
  if (!socks && o.tls && d.host && o.tls->terminates(*d.host, d.event.port)) return;
  d.event.verdict = NetVerdict::kDenied;
  d.event.refused_by = std::string(refused_by::kOpaqueTunnel);
  d.event.reason = socks ? "network.refuseOpaqueTunnels: a SOCKS tunnel cannot be seen into; "
                           "use HTTPS through the HTTP proxy"
                         : "network.refuseOpaqueTunnels: this tunnel would not be "
                           "TLS-terminated (tlsTerminate is off, or the host is in "
                           "tlsTerminate.excludeDomains)";
}

asio::awaitable<bool> Connection::terminate_tls(const TargetDecision& d) {
  const auto& tls = srv_->options().tls;
  if (!tls || !d.host || !tls->terminates(*d.host, d.event.port)) co_return false;
  // Bytes the client sent with its CONNECT would be lost to the helper's handshake:
  // such a tunnel is relayed as it is (its sentinels reach nobody's secret).
  auto opaque = [&](const char* why) {
    if (!srv_->options().refuse_opaque_tunnels) return false;
    NetDecision refused = d.event;
    refused.verdict = NetVerdict::kDenied;
    refused.refused_by = std::string(refused_by::kOpaqueTunnel);
    refused.reason = std::string("network.refuseOpaqueTunnels: ") + why;
    srv_->emit(refused);
    return true;
  };
  if (!in_.empty()) co_return opaque("the client sent data before the tunnel opened");
  set_phase(Phase::kHead, srv_->options().head_timeout);
  auto [ec] = co_await client_.async_wait(asio::socket_base::wait_read, kNoThrow);
  if (ec) co_return true;  // closed or timed out: nothing to relay
  unsigned char first = 0;
  const ssize_t n = ::recv(client_.native_handle(), &first, 1, MSG_PEEK);
  if (n != 1) co_return true;
  // Not a TLS handshake record: relayed, unless opaque tunnels are refused.
  if (first != 0x16) co_return opaque("the tunnel carried no TLS");
  error_code ignored;
  client_.non_blocking(false, ignored);
  upstream_.non_blocking(false, ignored);
  UniqueFd client(client_.release());
  UniqueFd upstream(upstream_.release());
  upstream_open_ = false;
  (void)tls->hand(std::move(client), std::move(upstream), d.event.host, d.event.port);
  co_return true;
}

}  // namespace vigil::proxy
