// The session's egress proxy, inside `vigil run`: one io_context on its own thread,
// listening on <session>/proxy.sock (which vigil-init bridges to 127.0.0.1:3128/1080 in
// the sandbox). Every decision is kept, in order, for the session log and the report to
// the model. One proxy per session: concurrent sessions never share one.
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "proxy/events.h"
#include "proxy/server.h"
#include "supervisor/core/policy.h"
#include "supervisor/core/result.h"
#include "supervisor/proxy_test_options.h"

namespace vigil {

class SessionProxy {
 public:
  // Compiles the allowlist (an invalid pattern is Errc::kInvalidPolicy with its JSON path),
  // binds `socket_path`, and starts serving on a thread of its own.
  // The callbacks run on the proxy's thread, in decision order. `test` weakens the proxy
  // for tests only (proxy_test_options.h; already checked against VIGIL_TEST_MODE).
  using OnDecision = std::function<void(const proxy::NetDecision&)>;
  using OnFailure = std::function<void(const proxy::UpstreamFailure&)>;
  static Result<std::unique_ptr<SessionProxy>> start(const NetworkPolicy& net,
                                                     const std::string& socket_path,
                                                     OnDecision on_decision, OnFailure on_failure,
                                                     const ProxyTestHooks& test = {});
  ~SessionProxy();  // graceful shutdown, then joins the thread

  // Stops accepting and closes connections; waits for the thread.
  void stop();

 private:
  class Sink;
  SessionProxy() = default;
  boost::asio::io_context io_;
  std::shared_ptr<Sink> sink_;
  std::unique_ptr<proxy::Server> server_;
  std::thread thread_;
  bool stopped_ = false;
};

}  // namespace vigil
