// The DNS stub's I/O shell (vigil.network.capture): a UDP socket on 127.0.0.1:53 in the
// sandbox's network namespace, which the sandbox's /etc/resolv.conf names; each datagram
// is answered by dns_answer() (observer/dns_answer.h) with a fake address. No query ever
// leaves the sandbox: the real resolution is the proxy's, at connect.
//
// Port 53 is below the namespace's ip_unprivileged_port_start (1024), and vigil-init holds
// no capability: the supervisor lowers that sysctl of the sandbox's own network namespace
// to 53 before bwrap lets vigil-init run (supervisor/launch/sandbox_netns.h), and the
// stub binds before the worker exists, so the command never holds the port first.
// Runs on the loop's thread (the fake-name table is that thread's).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "observer/fake_names.h"
#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil::init {

inline constexpr std::uint16_t kDnsPort = 53;

class DnsStub {
 public:
  // On `address`:53 (127.0.0.1, or an agent session command's own loopback address).
  static Result<DnsStub> bind(std::shared_ptr<FakeNames> names,
                              const std::string& address = "127.0.0.1");
  int fd() const { return udp_.get(); }
  // Answers every datagram waiting (non-blocking); malformed ones as dns_answer() says.
  void on_readable();

 private:
  DnsStub() = default;
  UniqueFd udp_;
  std::shared_ptr<FakeNames> names_;
};

}  // namespace vigil::init
