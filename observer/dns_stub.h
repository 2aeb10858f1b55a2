// The DNS stub's I/O shell (vigil.network.capture): a UDP socket and a TCP listener on
// 127.0.0.1:53 in the sandbox's network namespace, which the sandbox's /etc/resolv.conf
// names; each query is answered by dns_answer() (observer/dns_answer.h) with a fake
// address. TCP (a resolver's fallback for a truncated answer, `options use-vc`, dig
// +tcp) carries length-prefixed queries (next_tcp_query); a connection is served until
// it closes, sends something that is not a query, or cannot take an answer at once
// (answers are small: one that does not fit the socket's buffer closes it). At most
// kMaxDnsConnections are open: one more closes the oldest, so a program holding many
// idle connections delays only its own lookups. No query ever leaves the sandbox: the
// real resolution is the proxy's, at connect. The stub also polls the datagram sink
// (observer/datagram_sink.h), the end of every other UDP socket: the sandbox's UDP, on
// the loop's thread.
//
// Port 53 is below the namespace's ip_unprivileged_port_start (1024), and vigil-init holds
// no capability: the supervisor lowers that sysctl of the sandbox's own network namespace
// to 53 before bwrap lets vigil-init run (supervisor/launch/sandbox_netns.h), and the
// stub binds before the worker exists, so the command never holds the port first.
// Runs on the loop's thread (the fake-name table is that thread's).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "observer/capture_route.h"
#include "observer/datagram_sink.h"
#include "observer/fake_names.h"
#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil::init {

inline constexpr std::uint16_t kDnsPort = 53;
inline constexpr std::size_t kMaxDnsConnections = 32;

class DnsStub {
 public:
  // On `address`:53 (127.0.0.1, or an agent session command's own loopback address). With
  // `route`, the datagram sink too (one that cannot bind leaves UDP refused at connect()
  // with ENETUNREACH and no record).
  static Result<DnsStub> bind(std::shared_ptr<FakeNames> names,
                              std::shared_ptr<CaptureRoute> route = nullptr,
                              const std::string& address = "127.0.0.1");
  // Registers the UDP socket and the TCP listener with `epoll_fd`, under tags the loop
  // hands back to handle() (owns() tells them). Call once.
  Result<void> attach(int epoll_fd);
  static bool owns(std::uint64_t tag);
  // One epoll event of ours.
  void handle(int epoll_fd, std::uint64_t tag);

 private:
  DnsStub() = default;
  void on_datagrams();                // answers every datagram waiting (non-blocking)
  void on_accept(int epoll_fd);       // takes every connection waiting
  void on_stream(std::uint64_t tag);  // reads one connection, answers its whole queries
  UniqueFd udp_, tcp_;
  struct Stream {
    UniqueFd fd;
    std::string in;
  };
  std::map<std::uint64_t, Stream> streams_;  // by tag; the first is the oldest
  std::uint64_t next_stream_ = 0;
  std::shared_ptr<FakeNames> names_;
  std::optional<DatagramSink> sink_;
};

}  // namespace vigil::init
