// The proxy's side of TLS termination: which CONNECT tunnels are terminated, and the
// hand-off of one to vigil-tls (proxy/tls_wire.h) over the helper's control socket, whose
// net.request records come back on the proxy's io_context.
//
// A tunnel is terminated when network.tlsTerminate is set and its host is outside
// tlsTerminate.excludeDomains, or when its host has request rules (they cannot be judged
// otherwise), or a masked credential may be sent there; and only once its first byte is
// a TLS handshake record. Everything else is relayed as before.
//
// Threading: the proxy's io_context thread.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "proxy/credential_sentinels.h"
#include "proxy/domain_pattern.h"
#include "proxy/request_rules.h"
#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/core/events/net.h"
#include "supervisor/core/policy/policy.h"

namespace vigil::proxy {

class TlsHandoff : public std::enable_shared_from_this<TlsHandoff> {
 public:
  using OnRequest = std::function<void(const events::NetRequest&)>;
  // `control`: the connected control socket (the helper already configured). Errc::
  // kInvalidPolicy on a pattern that does not parse.
  static Result<std::shared_ptr<TlsHandoff>> create(boost::asio::io_context& io,
                                                    UniqueFd control, const NetworkPolicy& net,
                                                    const SentinelTable& sentinels,
                                                    OnRequest on_request);
  // Whether a CONNECT to host:port is to be terminated.
  bool terminates(const CanonicalHost& host, std::uint16_t port) const;
  // network.tlsTerminate.maxTunnels: whether as many tunnels as allowed are open in the
  // helper now (a tunnel counts from its hand-off until the helper says it ended).
  bool full() const { return active_ >= max_tunnels_; }
  // Hands the tunnel's two ends to the helper. Our copies are closed either way.
  Result<void> hand(UniqueFd client, UniqueFd upstream, const std::string& host,
                    std::uint16_t port);
  // Starts reading the helper's records; stop() closes the control socket (the helper
  // then ends, and with it every terminated tunnel).
  void start();
  void stop();

 private:
  TlsHandoff(boost::asio::io_context& io, UniqueFd control);
  void read_next();
  boost::asio::posix::stream_descriptor control_;
  bool all_ = false;
  std::vector<DomainPattern> exclude_;
  std::vector<DomainPattern> wanted_;  // rule hosts and inject hosts
  OnRequest on_request_;
  std::size_t active_ = 0;
  std::size_t max_tunnels_ = 256;
};

}  // namespace vigil::proxy
