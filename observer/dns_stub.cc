#include "observer/dns_stub.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <string>

#include "observer/dns_answer.h"

namespace vigil::init {

Result<DnsStub> DnsStub::bind(std::shared_ptr<FakeNames> names, const std::string& address) {
  DnsStub s;
  s.names_ = std::move(names);
  s.udp_.reset(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!s.udp_) return system_error("socket for the DNS stub");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(kDnsPort);
  if (::inet_pton(AF_INET, address.c_str(), &a.sin_addr) != 1)
    return make_error(Errc::kInvalidPolicy, "the DNS stub's address is not IPv4: " + address);
  if (::bind(s.udp_.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
    return system_error("bind the DNS stub to " + address +
                        ":53 (the sandbox's ip_unprivileged_port_start was not lowered)");
  return s;
}

void DnsStub::on_readable() {
  for (int i = 0; i < 64; ++i) {  // bounded: the loop's other work goes on
    char buf[kMaxDnsQueryBytes + 1];
    sockaddr_storage from{};
    socklen_t len = sizeof from;
    const ssize_t n = ::recvfrom(udp_.get(), buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &len);
    if (n < 0) return;  // EAGAIN: all answered
    auto answer = dns_answer(std::string_view(buf, static_cast<std::size_t>(n)), *names_);
    if (!answer) continue;
    ::sendto(udp_.get(), answer->data(), answer->size(), MSG_DONTWAIT,
             reinterpret_cast<sockaddr*>(&from), len);
  }
}

}  // namespace vigil::init
