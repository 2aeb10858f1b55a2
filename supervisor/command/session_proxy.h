// The session's egress proxy, inside `vigil run`: one io_context on its own thread,
// listening on <session>/proxy.sock (which vigil-init bridges to 127.0.0.1:3128/1080 in
// the sandbox). Every decision is kept, in order, for the session log and the report to
// the model. One proxy per session: concurrent sessions never share one.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "proxy/events.h"
#include "proxy/external_relay.h"
#include "proxy/server.h"
#include "supervisor/core/policy/policy.h"
#include "supervisor/core/base/result.h"
#include "supervisor/command/proxy_test_options.h"
#include "supervisor/command/tls_helper.h"

namespace vigil {

// What the command's environment gains: the session temp dir, and every proxy variable
// pointing at the session proxy on 127.0.0.1 (Linux: vigil-init's bridges, 3128 and 1080;
// macOS: the proxy's one TCP port for both, since it tells HTTP from SOCKS by the first
// byte). NO_PROXY: with `own_loopback` (Linux: the sandbox has its own network namespace,
// so its loopback reaches only servers the command itself started) the loopback names,
// so a test server and its client in one command talk directly; else empty: nothing
// bypasses the proxy (in an agent session, the session's loopback: its commands'
// servers). `host`: where the bridges listen (an agent session's command: its own
// loopback address, supervisor/launch/session_netns.h). VIGIL_SESSION=1 tells a nested
// `vigil run` where it is. Pure.
std::vector<std::pair<std::string, std::string>> proxy_environment(
    const std::string& tmp, std::uint16_t http_port, std::uint16_t socks_port,
    bool own_loopback = false, const std::string& host = "127.0.0.1");

// Ask mode for the proxy (proxy/ask.h): who is asked about a host off the allow list
// (none: it is refused at once) and how long a request is held.
struct ProxyAsk {
  std::shared_ptr<proxy::Asker> asker;
  std::chrono::milliseconds timeout{60'000};
  // `vigil run`'s asker (srt's agent channel) comes before the settings are read: the
  // hold is then the settings' vigil.network.askTimeoutSeconds, not `timeout`.
  bool timeout_from_settings = false;
};

// TLS termination for one command's proxy (supervisor/command/tls_helper.h): the masked
// credentials' table, and, in test mode only, an extra upstream trust anchor.
struct ProxyTls {
  proxy::SentinelTable sentinels;
  std::vector<AwsPair> aws_pairs;
  Sigv4Shapes sigv4;
  std::string upstream_ca;  // --test-upstream-ca (VIGIL_TEST_MODE=1): never from settings
  std::function<void(const events::NetRequest&)> on_request;
};

class SessionProxy {
 public:
  // The callbacks run on the proxy's thread, in decision order. `test` weakens the proxy
  // for tests only (proxy_test_options.h; already checked against VIGIL_TEST_MODE).
  using OnDecision = std::function<void(const events::NetDecision&)>;
  using OnFailure = std::function<void(const events::NetUpstreamFailure&)>;
  // Compiles the allowlist (an invalid pattern is Errc::kInvalidPolicy with its JSON path)
  // and binds `where`, without serving yet: connections wait in the backlog until serve().
  // So a launcher binds the socket before the sandbox that binds it in exists, and serves
  // once its session log is open. With network.httpProxyPort / socksProxyPort and a Unix
  // `where`, the relays to the user's proxy are bound beside it (external_proxy.h).
  // On Linux `where` is <session>/proxy.sock (vigil-init's
  // bridges reach it); macOS has no bridge: the sandboxed command reaches the proxy
  // directly at tcp:127.0.0.1:PORT (port 0: the kernel picks a free one; local_address()
  // says which), and the Seatbelt profile allows exactly that port.
  static Result<std::unique_ptr<SessionProxy>> open(const NetworkPolicy& net,
                                                    const proxy::ListenAddress& where,
                                                    OnDecision on_decision, OnFailure on_failure,
                                                    const ProxyTestHooks& test = {},
                                                    const ProxyAsk& ask = {},
                                                    const ProxyTls* tls = nullptr);
  static Result<std::unique_ptr<SessionProxy>> open(const NetworkPolicy& net,
                                                    const std::string& socket_path,
                                                    OnDecision on_decision, OnFailure on_failure,
                                                    const ProxyTestHooks& test = {},
                                                    const ProxyAsk& ask = {},
                                                    const ProxyTls* tls = nullptr);
  // vigil.network.capture: a second listener at `socket_path` whose CONNECTs come from
  // vigil-init for programs that ignored the proxy settings (proxy/captured.h): the same
  // allowlist, guard, ask mode and callbacks, every decision marked captured. Before
  // serve(); its socket is handed to vigil-init as a descriptor, never bound into the
  // sandbox.
  Result<void> listen_captured(const std::string& socket_path);
  // Starts accepting, on a thread of its own. Once; after stop(), nothing.
  void serve();
  // open() then serve().
  static Result<std::unique_ptr<SessionProxy>> start(const NetworkPolicy& net,
                                                     const proxy::ListenAddress& where,
                                                     OnDecision on_decision, OnFailure on_failure,
                                                     const ProxyTestHooks& test = {});

  ~SessionProxy();  // graceful shutdown, then joins the thread

  // Stops accepting and closes connections; waits for the thread.
  void stop();

  // What the listener is bound to (the real port for tcp port 0). Fixed once start()
  // returned, so it may be read from any thread.
  const proxy::ListenAddress& local_address() const { return bound_; }
  // The session CA's certificate when this proxy terminates TLS, else "".
  const std::string& ca_pem() const { return helper_.ca_pem; }

 private:
  class Sink;
  SessionProxy() = default;
  boost::asio::io_context io_;
  std::shared_ptr<Sink> sink_;
  std::unique_ptr<proxy::Server> server_;
  std::unique_ptr<proxy::Server> captured_;  // listen_captured()
  // What open() built the server from, for listen_captured().
  NetworkPolicy net_;
  proxy::ServerOptions options_;
  ProxyTestHooks test_;
  // network.httpProxyPort / socksProxyPort: relays to the user's proxy, on sockets beside
  // proxy.sock (supervisor/launch/external_proxy.h), on the same thread as the proxy.
  std::vector<std::unique_ptr<proxy::ExternalRelay>> relays_;
  std::thread thread_;
  proxy::ListenAddress bound_;
  TlsHelper helper_;  // vigil-tls, when this proxy terminates TLS
  std::shared_ptr<proxy::TlsHandoff> handoff_;
  bool serving_ = false;
  bool stopped_ = false;
};

}  // namespace vigil
