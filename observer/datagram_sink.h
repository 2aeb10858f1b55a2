// The datagram sink (vigil.network.capture): where UDP to anything but the sandbox's
// loopback ends. When the command connects a datagram socket to a remote address, the
// connect broker (observer/inet_broker.h) connects that socket here instead, registers it
// by its source port (observer/capture_route.h), and connect() succeeds: it is also how
// glibc's getaddrinfo sorts its answers (a UDP connect per address, nothing sent), which
// must leave no record.
//
// The first datagram that arrives from a registered port is the program using UDP: it is
// dropped, the proxy is asked to record the refusal (net.decision, captured, refused_by
// "udp": the block names host:port), and once it has, the socket is re-pointed at a
// closed loopback port and sent one empty datagram from vigil-init's side, so the
// kernel's port-unreachable error is on it (the caller's recv() or next send() fails with
// ECONNREFUSED, as for a host that refuses). A program that sends and exits without
// waiting can end the sandbox before the record is made. Nothing is ever sent anywhere else: the sandbox's
// network namespace has only `lo`.
//
// A datagram sent with an explicit address (sendto/sendmsg on an unconnected socket) is
// not trapped: the namespace has no route, and the kernel fails it with ENETUNREACH,
// without a record. Runs on the loop's thread.
#pragma once

#include <cstdint>
#include <memory>

#include "observer/capture_route.h"
#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil::init {

class DatagramSink {
 public:
  // A UDP socket on 127.0.0.1 (a free port, told to `route`), and a closed port found.
  static Result<DatagramSink> bind(std::shared_ptr<CaptureRoute> route);
  int fd() const { return udp_.get(); }
  // Takes every datagram waiting (non-blocking), refusing and reporting as above.
  void on_readable();

 private:
  DatagramSink() = default;
  UniqueFd udp_;
  std::uint16_t closed_port_ = 0;
  std::shared_ptr<CaptureRoute> route_;
};

}  // namespace vigil::init
