// Where the connect broker's sockets lead (vigil.network.capture; observer/inet_broker.h):
// shared by the broker's threads, which register a connection before making it, and the
// bridge (observer/bridge.h), which accepts it on its capture listener and relays it to
// the proxy's capture socket with the broker's CONNECT sent first.
//
// The capture listener is on the sandbox's loopback, which the command can reach too: a
// connection is relayed only when its source port is one a broker thread registered.
// That port belongs to vigil-init's own socket, bound (without SO_REUSEADDR/PORT) before
// it was registered, so no socket of the command can hold it meanwhile.
//
// UDP (observer/datagram_sink.h): a datagram socket the command connects to anything
// but loopback is connected by vigil-init to the datagram sink instead, and registered
// here by its source port with where the caller meant it to go. Nothing is
// recorded at connect() (glibc's getaddrinfo connects a UDP socket to every answer to
// sort them, and sends nothing); the sink's first datagram from that port is the use,
// refused and recorded. Thread-safe.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "supervisor/core/base/unique_fd.h"

namespace vigil::init {

// Where a datagram socket was meant to go, and vigil-init's own reference to it
// (to refuse what the caller sends next: datagram_sink.h).
struct DatagramPeer {
  std::string host;  // the name (from a fake address) or the literal
  std::uint16_t port = 0;
  pid_t pid = 0;  // the caller (its name is read when it sends)
  int family = 0;
  UniqueFd socket;
};
// Registrations kept at most: the oldest goes first (a getaddrinfo's sockets are never
// used, and the caller closed them long ago; our reference was all that kept them).
inline constexpr std::size_t kMaxDatagramPeers = 128;

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

  // The datagram sink's port (0: none; UDP is then refused at connect with no record).
  std::uint16_t sink_port() const { return sink_port_; }
  void set_sink_port(std::uint16_t p) { sink_port_ = p; }
  void expect_datagram(std::uint16_t source_port, DatagramPeer peer) {
    const std::lock_guard<std::mutex> lock(mu_);
    while (datagram_peers_.size() >= kMaxDatagramPeers && !datagram_order_.empty()) {
      const auto [port, seq] = datagram_order_.front();
      datagram_order_.pop_front();
      auto old = datagram_peers_.find(port);
      if (old != datagram_peers_.end() && old->second.first == seq) datagram_peers_.erase(old);
    }
    datagram_peers_[source_port] = {++datagram_seq_, std::move(peer)};
    datagram_order_.emplace_back(source_port, datagram_seq_);
    // Entries taken since leave their order behind: dropped once they reach the front.
    while (!datagram_order_.empty()) {
      const auto [port, seq] = datagram_order_.front();
      auto live = datagram_peers_.find(port);
      if (live != datagram_peers_.end() && live->second.first == seq) break;
      datagram_order_.pop_front();
    }
  }
  std::optional<DatagramPeer> take_datagram(std::uint16_t source_port) {
    const std::lock_guard<std::mutex> lock(mu_);
    auto it = datagram_peers_.find(source_port);
    if (it == datagram_peers_.end()) return std::nullopt;
    DatagramPeer peer = std::move(it->second.second);
    datagram_peers_.erase(it);
    return peer;
  }

 private:
  const std::string upstream_;
  std::uint16_t port_ = 0;
  std::uint16_t sink_port_ = 0;
  std::mutex mu_;
  std::map<std::uint16_t, std::string> pending_;
  std::map<std::uint16_t, std::pair<std::uint64_t, DatagramPeer>> datagram_peers_;  // seq, peer
  std::deque<std::pair<std::uint16_t, std::uint64_t>> datagram_order_;  // port, seq
  std::uint64_t datagram_seq_ = 0;
};

}  // namespace vigil::init
