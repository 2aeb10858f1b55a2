#include "observer/datagram_sink.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>

#include "observer/idle_threads.h"
#include "observer/inet_broker.h"

namespace vigil::init {
namespace {

Result<UniqueFd> sink_socket(std::uint16_t* port) {
  UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) return system_error("socket for the datagram sink");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&a), &len) != 0)
    return system_error("bind the datagram sink to 127.0.0.1");
  *port = ntohs(a.sin_port);
  return fd;
}

// The caller's socket (vigil-init's reference to it) connected to `port` on loopback,
// in its own family (a v6 socket reaches 127.0.0.1 v4-mapped), and sent one empty
// datagram: nobody listens there, so the kernel sets ECONNREFUSED on it.
void refuse_rest_of(const DatagramPeer& peer, std::uint16_t port) {
  sockaddr_storage to{};
  socklen_t len = 0;
  if (peer.family == AF_INET6) {
    auto* t = reinterpret_cast<sockaddr_in6*>(&to);
    t->sin6_family = AF_INET6;
    ::inet_pton(AF_INET6, "::ffff:127.0.0.1", &t->sin6_addr);
    t->sin6_port = htons(port);
    len = sizeof *t;
  } else {
    auto* t = reinterpret_cast<sockaddr_in*>(&to);
    t->sin_family = AF_INET;
    t->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    t->sin_port = htons(port);
    len = sizeof *t;
  }
  if (::connect(peer.socket.get(), reinterpret_cast<sockaddr*>(&to), len) != 0) return;
  ::send(peer.socket.get(), "", 0, MSG_DONTWAIT | MSG_NOSIGNAL);
}

}  // namespace

Result<DatagramSink> DatagramSink::bind(std::shared_ptr<CaptureRoute> route) {
  DatagramSink s;
  std::uint16_t port = 0;
  auto udp = sink_socket(&port);
  VIGIL_TRY(udp);
  // A port nobody holds: found by binding and letting go (the sandbox's own programs
  // could take it later; an empty datagram to one of them is all that would cost).
  auto probe = sink_socket(&s.closed_port_);
  VIGIL_TRY(probe);
  s.udp_ = std::move(*udp);
  s.route_ = std::move(route);
  s.route_->set_sink_port(port);
  return s;
}

void DatagramSink::on_readable() {
  for (int i = 0; i < 64; ++i) {  // bounded: the loop's other work goes on
    char buf[1];
    sockaddr_storage from{};
    socklen_t len = sizeof from;
    const ssize_t n = ::recvfrom(udp_.get(), buf, sizeof buf, MSG_TRUNC,
                                 reinterpret_cast<sockaddr*>(&from), &len);
    if (n < 0) return;  // EAGAIN: all taken
    // Every sender reaches us as 127.0.0.1 (v6 sockets v4-mapped, which the kernel
    // delivers to an AF_INET socket as AF_INET).
    if (from.ss_family != AF_INET) continue;
    auto peer = route_->take_datagram(ntohs(reinterpret_cast<sockaddr_in*>(&from)->sin_port));
    if (!peer) continue;  // refused already (or another program's datagram): dropped
    // Recorded first, refused after: a program that exits on the refusal would otherwise
    // end the sandbox (and this thread) before the proxy has the record.
    auto shared = std::make_shared<DatagramPeer>(std::move(*peer));
    run_on_idle_thread([route = route_, shared, closed = closed_port_] {
      report_datagram(*shared, *route);
      refuse_rest_of(*shared, closed);
    });
  }
}

}  // namespace vigil::init
