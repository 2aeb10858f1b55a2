#include "observer/dns_stub.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <cerrno>
#include <string>

#include "observer/dns_answer.h"

namespace vigil::init {
namespace {

// Tags in epoll_event.data.u64: the loop's own are 0 and 1, the bridge's have bit 63 set.
constexpr std::uint64_t kDnsUdpTag = 2;
constexpr std::uint64_t kDnsListenTag = 3;
constexpr std::uint64_t kDnsSinkTag = 4;
constexpr std::uint64_t kDnsStreamBit = 1ULL << 62;  // | the connection's number

// On `address`:53 (127.0.0.1, or an agent session command's own loopback address).
Result<UniqueFd> dns_socket(int type, const std::string& address) {
  UniqueFd fd(::socket(AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) return system_error("socket for the DNS stub");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(kDnsPort);
  if (::inet_pton(AF_INET, address.c_str(), &a.sin_addr) != 1)
    return make_error(Errc::kInvalidPolicy, "the DNS stub's address is not IPv4: " + address);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
    return system_error("bind the DNS stub to " + address +
                        ":53 (the sandbox's ip_unprivileged_port_start was not lowered)");
  if (type == SOCK_STREAM && ::listen(fd.get(), 16) != 0)
    return system_error("listen on " + address + ":53 (TCP) for the DNS stub");
  return fd;
}

bool dns_watch(int epoll_fd, int fd, std::uint64_t tag) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = tag;
  return ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) == 0;
}

}  // namespace

Result<DnsStub> DnsStub::bind(std::shared_ptr<FakeNames> names, std::shared_ptr<CaptureRoute> route,
                              const std::string& address) {
  DnsStub s;
  s.names_ = std::move(names);
  auto udp = dns_socket(SOCK_DGRAM, address);
  VIGIL_TRY(udp);
  auto tcp = dns_socket(SOCK_STREAM, address);
  VIGIL_TRY(tcp);
  s.udp_ = std::move(*udp);
  s.tcp_ = std::move(*tcp);
  if (route) {
    auto sink = DatagramSink::bind(std::move(route));
    if (sink) s.sink_.emplace(std::move(sink).value());
  }
  return s;
}

Result<void> DnsStub::attach(int epoll_fd) {
  if (!dns_watch(epoll_fd, udp_.get(), kDnsUdpTag) || !dns_watch(epoll_fd, tcp_.get(), kDnsListenTag) ||
      (sink_ && !dns_watch(epoll_fd, sink_->fd(), kDnsSinkTag)))
    return system_error("epoll_ctl for the DNS stub");
  return {};
}

bool DnsStub::owns(std::uint64_t tag) {
  return tag == kDnsUdpTag || tag == kDnsListenTag || tag == kDnsSinkTag || (tag >> 62) == 1;
}

void DnsStub::handle(int epoll_fd, std::uint64_t tag) {
  if (tag == kDnsUdpTag) {
    on_datagrams();
  } else if (tag == kDnsListenTag) {
    on_accept(epoll_fd);
  } else if (tag == kDnsSinkTag) {
    if (sink_) sink_->on_readable();
  } else {
    on_stream(tag);
  }
}

void DnsStub::on_datagrams() {
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

void DnsStub::on_accept(int epoll_fd) {
  for (int i = 0; i < 16; ++i) {
    UniqueFd c(::accept4(tcp_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!c) return;
    if (streams_.size() >= kMaxDnsConnections) streams_.erase(streams_.begin());  // the oldest
    const std::uint64_t tag = kDnsStreamBit | (next_stream_++ & (kDnsStreamBit - 1));
    if (!dns_watch(epoll_fd, c.get(), tag)) continue;  // closed: the client sees EOF
    streams_[tag].fd = std::move(c);
  }
}

void DnsStub::on_stream(std::uint64_t tag) {
  auto it = streams_.find(tag);
  if (it == streams_.end()) return;
  Stream& s = it->second;
  char buf[kMaxDnsQueryBytes + 2];
  const ssize_t n = ::recv(s.fd.get(), buf, sizeof buf, MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  bool open = n > 0;  // 0: the client closed; < 0: an error
  if (open) s.in.append(buf, static_cast<std::size_t>(n));
  while (open) {
    const TcpQuery q = next_tcp_query(s.in);
    if (q.state == TcpQuery::State::kIncomplete) break;
    auto answer = q.state == TcpQuery::State::kQuery ? dns_answer(q.query, *names_) : std::nullopt;
    if (!answer) {
      open = false;  // not a query we answer: nothing else will follow it sensibly
      break;
    }
    const std::string framed = tcp_framed(*answer);
    const ssize_t sent = ::send(s.fd.get(), framed.data(), framed.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    open = sent == static_cast<ssize_t>(framed.size());
    s.in.erase(0, q.used);
  }
  if (!open) streams_.erase(it);  // closing the fd takes it out of the epoll set
}

}  // namespace vigil::init
