// Where the connect broker's sockets lead (vigil.network.capture; observer/inet_broker.h):
// shared by the broker's threads, which register a connection before making it, and the
// bridge (observer/bridge.h), which accepts it on its capture listener and relays it to
// the proxy's capture socket with the broker's CONNECT sent first.
//
// The capture listener is on the sandbox's loopback, which the command can reach too: a
// connection is relayed only when its source port is one a broker thread registered.
// That port belongs to vigil-init's own socket, bound (without SO_REUSEADDR/PORT) before
// it was registered, so no socket of the command can hold it meanwhile. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace vigil::init {

class CaptureRoute {
 public:
  explicit CaptureRoute(std::string upstream) : upstream_(std::move(upstream)) {}
  // The proxy's capture socket, as vigil-init connects to it ("/proc/self/fd/N").
  const std::string& upstream() const { return upstream_; }
  // The capture listener's port (set once by the bridge, before the worker starts).
  std::uint16_t port() const { return port_; }
  void set_port(std::uint16_t p) { port_ = p; }

  // A connection from `source_port` is the broker's: relay it, `first` sent upstream first.
  void expect(std::uint16_t source_port, std::string first) {
    const std::lock_guard<std::mutex> lock(mu_);
    pending_[source_port] = std::move(first);
  }
  // The bridge's side: the registered bytes, once; nullopt for anyone else's connection.
  std::optional<std::string> take(std::uint16_t source_port) {
    const std::lock_guard<std::mutex> lock(mu_);
    auto it = pending_.find(source_port);
    if (it == pending_.end()) return std::nullopt;
    std::string first = std::move(it->second);
    pending_.erase(it);
    return first;
  }
  // A registration whose connect failed (nothing will arrive from that port).
  void forget(std::uint16_t source_port) {
    const std::lock_guard<std::mutex> lock(mu_);
    pending_.erase(source_port);
  }

 private:
  const std::string upstream_;
  std::uint16_t port_ = 0;
  std::mutex mu_;
  std::map<std::uint16_t, std::string> pending_;
};

}  // namespace vigil::init
