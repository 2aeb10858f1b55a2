#include "supervisor/command/session_proxy.h"

#include "supervisor/launch/external_proxy.h"

#include <pthread.h>
#include <signal.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/address.hpp>

namespace vigil {

std::vector<std::pair<std::string, std::string>> proxy_environment(const std::string& tmp,
                                                                   std::uint16_t http_port,
                                                                   std::uint16_t socks_port,
                                                                   bool own_loopback,
                                                                   const std::string& host) {
  const std::string no_proxy = own_loopback ? "localhost,127.0.0.1,::1" : "";
  const std::string http = "http://" + host + ":" + std::to_string(http_port);
  const std::string socks_at = host + ":" + std::to_string(socks_port);
  const std::string socks = "socks5h://" + socks_at;
  return {
      {"TMPDIR", tmp},
      {"HTTP_PROXY", http},
      {"HTTPS_PROXY", http},
      {"http_proxy", http},
      {"https_proxy", http},
      {"ALL_PROXY", socks},
      {"all_proxy", socks},
      {"NO_PROXY", no_proxy},
      {"no_proxy", no_proxy},
      {"VIGIL_SANDBOX", "1"},
      // ssh (git over ssh) through SOCKS5 with OpenBSD netcat (macOS's nc is one).
      {"GIT_SSH_COMMAND", "ssh -o ProxyCommand='nc -X 5 -x " + socks_at + " %h %p'"},
  };
}

class SessionProxy::Sink : public proxy::EventSink {
 public:
  Sink(OnDecision d, OnFailure f) : on_decision_(std::move(d)), on_failure_(std::move(f)) {}
  void on_decision(const events::NetDecision& d) override { on_decision_(d); }
  void on_upstream_failure(const events::NetUpstreamFailure& f) override { on_failure_(f); }

 private:
  OnDecision on_decision_;
  OnFailure on_failure_;
};

namespace {
proxy::ListenAddress unix_address(const std::string& socket_path) {
  proxy::ListenAddress where;
  where.kind = proxy::ListenAddress::Kind::kUnix;
  where.path = socket_path;
  return where;
}
}  // namespace

Result<std::unique_ptr<SessionProxy>> SessionProxy::start(const NetworkPolicy& net,
                                                          const proxy::ListenAddress& where,
                                                          OnDecision on_decision,
                                                          OnFailure on_failure,
                                                          const ProxyTestHooks& test) {
  auto p = open(net, where, std::move(on_decision), std::move(on_failure), test);
  if (p) (*p)->serve();
  return p;
}

Result<std::unique_ptr<SessionProxy>> SessionProxy::open(const NetworkPolicy& net,
                                                         const std::string& socket_path,
                                                         OnDecision on_decision,
                                                         OnFailure on_failure,
                                                         const ProxyTestHooks& test,
                                                         const ProxyAsk& ask,
                                                         const ProxyTls* tls) {
  return open(net, unix_address(socket_path), std::move(on_decision), std::move(on_failure), test,
              ask, tls);
}

Result<std::unique_ptr<SessionProxy>> SessionProxy::open(const NetworkPolicy& net,
                                                         const proxy::ListenAddress& where,
                                                         OnDecision on_decision,
                                                         OnFailure on_failure,
                                                         const ProxyTestHooks& test,
                                                         const ProxyAsk& ask,
                                                         const ProxyTls* tls) {
  if (where.kind == proxy::ListenAddress::Kind::kTcp) {
    // Anything that can reach the listener can use the session's allowlist: loopback
    // only (proxy::Server::listen binds whatever it is given).
    boost::system::error_code ec;
    const auto addr = boost::asio::ip::make_address(where.host, ec);
    if (ec || !addr.is_loopback()) {
      return make_error(Errc::kInternal,
                        "session proxy: " + where.text() + " is not a loopback address");
    }
  }
  std::unique_ptr<SessionProxy> p(new SessionProxy());
  p->sink_ = std::make_shared<Sink>(std::move(on_decision), std::move(on_failure));
  proxy::ServerOptions options;
  options.test_allow_loopback = test.allow_loopback;
  options.asker = ask.asker;
  options.ask_timeout = ask.timeout;
  options.refuse_opaque_tunnels = net.refuse_opaque_tunnels;
  if (needs_tls_helper(net, tls != nullptr && !tls->sentinels.empty())) {
    proxy::tlswire::HelperConfig config;
    if (tls != nullptr) {
      config.sentinels = tls->sentinels.entries();
      config.aws_pairs = tls->aws_pairs;
      config.sigv4 = tls->sigv4;
      config.upstream_ca_file = tls->upstream_ca;
    }
    config.rules = net.request_rules;
    config.require_host_match = net.require_host_match;
    config.handshake_timeout_ms = net.tls_terminate.handshake_timeout_ms;
    auto helper = start_tls_helper(config);
    VIGIL_TRY(helper);
    p->helper_ = std::move(helper).value();
    auto on_request = tls != nullptr ? tls->on_request : nullptr;
    auto handoff = proxy::TlsHandoff::create(p->io_, std::move(p->helper_.control), net,
                                             tls != nullptr ? tls->sentinels
                                                            : proxy::SentinelTable{},
                                             std::move(on_request));
    VIGIL_TRY(handoff);
    p->handoff_ = std::move(handoff).value();
    options.tls = p->handoff_;
  }
  p->net_ = net;
  p->options_ = options;
  p->test_ = test;
  auto server = proxy::Server::create(p->io_, net, options,
                                      make_proxy_resolver(test, p->io_.get_executor()), p->sink_);
  VIGIL_TRY(server);
  p->server_ = std::move(server).value();
  VIGIL_TRY_VOID(p->server_->listen(where));
  p->bound_ = p->server_->local_address();
  if (where.kind == proxy::ListenAddress::Kind::kUnix) {
    using Kind = proxy::ExternalRelay::Kind;
    for (auto [port, kind, path, origin] :
         {std::tuple{net.external_http_port, Kind::kHttp, external_http_socket(where.path),
                     "network.httpProxyPort"},
          std::tuple{net.external_socks_port, Kind::kSocks5, external_socks_socket(where.path),
                     "network.socksProxyPort"}}) {
      if (port == 0) continue;
      auto relay = proxy::ExternalRelay::create(p->io_, path, kind, port, origin, p->sink_);
      VIGIL_TRY(relay);
      p->relays_.push_back(std::move(relay).value());
    }
  }
  return p;
}

Result<void> SessionProxy::listen_captured(const std::string& socket_path) {
  proxy::ServerOptions options = options_;
  options.captured = true;
  auto server = proxy::Server::create(io_, net_, options,
                                      make_proxy_resolver(test_, io_.get_executor()), sink_);
  VIGIL_TRY(server);
  VIGIL_TRY_VOID((*server)->listen(unix_address(socket_path)));
  captured_ = std::move(server).value();
  return {};
}

void SessionProxy::serve() {
  if (serving_ || stopped_) return;
  serving_ = true;
  server_->start();
  if (handoff_) handoff_->start();
  if (captured_) captured_->start();
  for (auto& r : relays_) r->start();
  // The thread starts with every signal blocked (a new thread inherits its creator's
  // mask): SIGCHLD and the forwarded signals must reach the supervisor's signalfd on the
  // main thread, never be taken by this one.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  thread_ = std::thread([io = &io_] {
    auto guard = boost::asio::make_work_guard(*io);
    io->run();
  });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

void SessionProxy::stop() {
  if (stopped_) return;
  stopped_ = true;
  // The sandbox is gone when this runs: nothing will connect again; cut what is left.
  // (No server when start() failed before making one: a bad allowlist pattern.)
  if (server_) server_->abort();
  if (captured_) captured_->abort();
  for (auto& r : relays_) r->abort();
  io_.stop();
  if (thread_.joinable()) thread_.join();
  // io_.stop() can win the race with the posted abort(): the listener would stay open
  // (and, in TCP mode, keep accepting into its backlog) until the destructor. The
  // io_context is not running any more, so the server may be destroyed here.
  server_.reset();
  captured_.reset();
  relays_.clear();
  // Closing the control socket ends vigil-tls, and every tunnel it held.
  if (handoff_) handoff_->stop();
  handoff_.reset();
  if (helper_.pid > 0) {
    reap_tls_helper(helper_.pid);
    helper_.pid = -1;
  }
}

SessionProxy::~SessionProxy() { stop(); }

}  // namespace vigil
