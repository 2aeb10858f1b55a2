#include "proxy/tls_tunnel.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include "proxy/tls_stream.h"

namespace vigil::proxy::tls {
namespace {

Socket adopt(const asio::any_io_executor& ex, UniqueFd fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&ss), &len);
  return Socket(ex, asio::generic::stream_protocol(ss.ss_family, SOCK_STREAM), fd.release());
}

}  // namespace

Result<std::unique_ptr<TunnelContext>> TunnelContext::create(tlswire::HelperConfig config,
                                                             std::function<void(std::string)> emit) {
  std::unique_ptr<TunnelContext> c(new TunnelContext());
  for (auto& s : config.sentinels) VIGIL_TRY_VOID(c->sentinels_.add(s));
  auto rules = compile_request_rules(config.rules);
  VIGIL_TRY(rules);
  c->rules_ = std::move(rules).value();
  auto ca = SessionCa::create();
  VIGIL_TRY(ca);
  c->ca_ = std::move(ca).value();
  c->client_ctx_ = std::make_unique<ssl::context>(ssl::context::tls_client);
  boost::system::error_code ec;
  c->client_ctx_->set_default_verify_paths(ec);
  if (ec) return make_error(Errc::kInternal, "TLS helper: the system trust store: " + ec.message());
  if (!config.upstream_ca_file.empty()) {
    c->client_ctx_->load_verify_file(config.upstream_ca_file, ec);
    if (ec) {
      return make_error(Errc::kInvalidPolicy,
                        "TLS helper: the test upstream CA " + config.upstream_ca_file + ": " +
                            ec.message());
    }
  }
  c->client_ctx_->set_verify_mode(ssl::verify_peer);
  SSL_CTX_set_min_proto_version(c->client_ctx_->native_handle(), TLS1_2_VERSION);
  c->config_ = std::move(config);
  c->emit_ = std::move(emit);
  return c;
}

Result<ssl::context*> TunnelContext::server_context(const std::string& host) {
  if (auto it = server_ctx_.find(host); it != server_ctx_.end()) return it->second.get();
  auto leaf = ca_->leaf_for(host);
  VIGIL_TRY(leaf);
  auto ctx = std::make_unique<ssl::context>(ssl::context::tls_server);
  SSL_CTX* raw = ctx->native_handle();
  SSL_CTX_set_min_proto_version(raw, TLS1_2_VERSION);
  if (SSL_CTX_use_certificate(raw, (*leaf)->cert.get()) != 1 ||
      SSL_CTX_use_PrivateKey(raw, (*leaf)->key.get()) != 1) {
    return make_error(Errc::kInternal, "TLS helper: cannot use the leaf for " + host);
  }
  auto* out = ctx.get();
  server_ctx_.emplace(host, std::move(ctx));
  return out;
}

asio::awaitable<void> TunnelContext::serve(UniqueFd client_fd, UniqueFd upstream_fd,
                                           tlswire::Tunnel t) {
  co_await serve_tunnel(std::move(client_fd), std::move(upstream_fd), std::move(t));
  emit_(std::string(tlswire::kTunnelEnded));  // its slot is free again
}

asio::awaitable<void> TunnelContext::serve_tunnel(UniqueFd client_fd, UniqueFd upstream_fd,
                                                  tlswire::Tunnel t) {
  auto ex = co_await asio::this_coro::executor;
  auto sctx = server_context(t.host);
  if (!sctx) co_return;
  // TCP_NODELAY both ways (a unix socket refuses it, harmlessly): a TLS record is written
  // whole, and one held back for the peer's delayed ACK cost every request milliseconds.
  for (const int fd : {client_fd.get(), upstream_fd.get()}) {
    const int one = 1;
    (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  Stream client(adopt(ex, std::move(client_fd)), **sctx);
  Stream up(adopt(ex, std::move(upstream_fd)), *client_ctx_);
  // A handshake that does not finish in time closes the tunnel.
  asio::steady_timer deadline(ex);
  deadline.expires_after(std::chrono::milliseconds(config_.handshake_timeout_ms));
  deadline.async_wait([&](boost::system::error_code ec) {
    if (ec) return;
    boost::system::error_code ignored;
    client.lowest_layer().close(ignored);
    up.lowest_layer().close(ignored);
  });
  {
    auto [ec] = co_await client.async_handshake(ssl::stream_base::server, kNoThrow);
    if (ec) co_return;
  }
  SSL_set_tlsext_host_name(up.native_handle(), t.host.c_str());
  up.set_verify_callback(ssl::host_name_verification(t.host));
  {
    auto [ec] = co_await up.async_handshake(ssl::stream_base::client, kNoThrow);
    deadline.cancel();
    if (ec) {
      // The upstream is not who it says: the client is told, nothing is sent there.
      co_await write(client, http::error_response(502, "upstream-certificate",
                                                  "the upstream server's certificate for " +
                                                      t.host + " did not verify: " +
                                                      ec.message()));
      co_return;
    }
  }
  std::string in, upin;
  while (true) {
    const bool keep = co_await serve_one(*this, client, up, in, upin, t);
    if (!keep) break;
  }
  auto [e1] = co_await client.async_shutdown(kNoThrow);
  (void)e1;
}

}  // namespace vigil::proxy::tls
