#include "supervisor/session_proxy.h"

#include <pthread.h>
#include <signal.h>

#include <boost/asio/executor_work_guard.hpp>

namespace vigil {

class SessionProxy::Sink : public proxy::EventSink {
 public:
  Sink(OnDecision d, OnFailure f) : on_decision_(std::move(d)), on_failure_(std::move(f)) {}
  void on_decision(const proxy::NetDecision& d) override { on_decision_(d); }
  void on_upstream_failure(const proxy::UpstreamFailure& f) override { on_failure_(f); }

 private:
  OnDecision on_decision_;
  OnFailure on_failure_;
};

Result<std::unique_ptr<SessionProxy>> SessionProxy::start(const NetworkPolicy& net,
                                                          const std::string& socket_path,
                                                          OnDecision on_decision,
                                                          OnFailure on_failure,
                                                          const ProxyTestHooks& test) {
  std::unique_ptr<SessionProxy> p(new SessionProxy());
  p->sink_ = std::make_shared<Sink>(std::move(on_decision), std::move(on_failure));
  proxy::ServerOptions options;
  options.test_allow_loopback = test.allow_loopback;
  auto server = proxy::Server::create(p->io_, net, options,
                                      make_proxy_resolver(test, p->io_.get_executor()), p->sink_);
  if (!server) return std::move(server).error();
  p->server_ = std::move(server).value();
  proxy::ListenAddress where;
  where.kind = proxy::ListenAddress::Kind::kUnix;
  where.path = socket_path;
  if (auto r = p->server_->listen(where); !r) return std::move(r).error();
  p->server_->start();
  // The thread starts with every signal blocked (a new thread inherits its creator's
  // mask): SIGCHLD and the forwarded signals must reach the supervisor's signalfd on the
  // main thread, never be taken by this one.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  p->thread_ = std::thread([io = &p->io_] {
    auto guard = boost::asio::make_work_guard(*io);
    io->run();
  });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return p;
}

void SessionProxy::stop() {
  if (stopped_) return;
  stopped_ = true;
  // The sandbox is gone when this runs: nothing will connect again; cut what is left.
  server_->abort();
  io_.stop();
  if (thread_.joinable()) thread_.join();
}

SessionProxy::~SessionProxy() { stop(); }

}  // namespace vigil
