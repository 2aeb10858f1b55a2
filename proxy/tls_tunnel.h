// One terminated tunnel, inside vigil-tls: the client's TLS is ended with a leaf of the
// session CA, the upstream's is begun with the system trust store (plus the test anchor,
// in test mode) and the host name verified, and HTTP/1.1 requests are relayed one by
// one, kept alive: each judged by the request rules, its head's sentinels swapped for
// real values when the host may receive them, and recorded (tls_wire.h's net.request).
//
// Threading: one io_context thread for every tunnel.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "proxy/credential_sentinels.h"
#include "proxy/request_rules.h"
#include "proxy/tls_ca.h"
#include "proxy/tls_wire.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil::proxy::tls {

// What every tunnel of the helper shares.
class TunnelContext {
 public:
  static Result<std::unique_ptr<TunnelContext>> create(tlswire::HelperConfig config,
                                                       std::function<void(std::string)> emit);
  const std::string& ca_pem() const { return ca_->cert_pem(); }

  // Serves one tunnel until either side closes.
  boost::asio::awaitable<void> serve(UniqueFd client, UniqueFd upstream, tlswire::Tunnel t);

  boost::asio::awaitable<void> serve_tunnel(UniqueFd client, UniqueFd upstream,
                                            tlswire::Tunnel t);
  // The server-side context for `host` (its leaf), made once.
  Result<boost::asio::ssl::context*> server_context(const std::string& host);
  boost::asio::ssl::context& client_context() { return *client_ctx_; }
  const tlswire::HelperConfig& config() const { return config_; }
  const SentinelTable& sentinels() const { return sentinels_; }
  const std::vector<CompiledRequestRule>& rules() const { return rules_; }
  void emit(const events::NetRequest& r) { emit_(tlswire::encode_request(r)); }

 private:
  TunnelContext() = default;
  tlswire::HelperConfig config_;
  SentinelTable sentinels_;
  std::vector<CompiledRequestRule> rules_;
  std::unique_ptr<SessionCa> ca_;
  std::unique_ptr<boost::asio::ssl::context> client_ctx_;
  std::map<std::string, std::unique_ptr<boost::asio::ssl::context>> server_ctx_;
  std::function<void(std::string)> emit_;
};

}  // namespace vigil::proxy::tls
