// network.httpProxyPort / socksProxyPort: the user runs a proxy of their own on the
// host's 127.0.0.1, and the sandbox's bridge for that protocol leads to it. The sandbox
// has its own network namespace, so the bridge cannot reach the host's loopback: it
// reaches this relay's Unix socket (in the session directory), and the relay connects to
// 127.0.0.1:PORT on the host and copies bytes both ways, unchanged. The external proxy
// decides; vigil does not. Each connection is still reported, as a net.decision whose
// rule is the settings key and whose reason says vigil did not decide, with the target
// read from the client's first bytes (relay_sniff.h) when they name one.
//
// Threading and lifetime as proxy::Server: one io_context, on whichever thread runs it;
// abort() may be called from any thread (it posts). Every socket is CLOEXEC.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "proxy/events.h"
#include "supervisor/core/base/result.h"

namespace vigil::proxy {

class ExternalRelay {
 public:
  enum class Kind { kHttp, kSocks5 };
  // Binds `socket_path` now (mode 0600; a stale socket nobody listens on is replaced),
  // so the sandbox can bind it in before start(). `origin` is the settings key
  // ("network.httpProxyPort"), named in every event.
  static Result<std::unique_ptr<ExternalRelay>> create(boost::asio::io_context& io,
                                                       const std::string& socket_path, Kind kind,
                                                       std::uint16_t port, std::string origin,
                                                       std::shared_ptr<EventSink> sink);
  ~ExternalRelay();  // removes the socket; call when the io_context is not running
  ExternalRelay(const ExternalRelay&) = delete;
  ExternalRelay& operator=(const ExternalRelay&) = delete;

  void start();  // starts accepting; once
  void abort();  // stops accepting and cuts every connection; thread-safe

  // The reason every event of this relay carries (pure; for tests and explain).
  static std::string reason(std::uint16_t port, std::string_view origin);

  class Impl;

 private:
  explicit ExternalRelay(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<Impl> impl_;
};

}  // namespace vigil::proxy
