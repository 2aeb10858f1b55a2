// The connect broker (vigil.network.capture): connect() of an AF_INET/AF_INET6 stream
// socket reaches vigil-init (filters/filter_specs.h: net-capture, or the unix broker's
// connect row), and a program that ignores the proxy settings gets a socket connected
// THROUGH the proxy, decided by the same allowlist, guard, ask mode and records.
//
//   1. As the unix broker does (observer/unix_broker.h): pidfd of the caller, id checked,
//      its socket fetched (pidfd_getfd), the address copied once, the id checked again.
//      Family and type are the fetched socket's (SO_DOMAIN/SO_TYPE), not the address's.
//   2. Not AF_INET/AF_INET6: the unix broker's business (or CONTINUE where unix sockets
//      are all allowed). Not SOCK_STREAM: UDP to a loopback address continues (the DNS
//      stub); UDP anywhere else is connected (the caller's own socket, by vigil-init) to
//      the datagram sink (observer/datagram_sink.h: its first datagram is refused and
//      recorded); another type (raw) is refused with ENETUNREACH, as the namespace would.
//   3. A loopback, unspecified (0.0.0.0/::, which Linux connects to the local host) or
//      v4-mapped loopback address: CONTINUE, direct. The kernel then reads the address
//      again, so a caller that rewrites it after our copy can make it connect somewhere
//      else -- but the sandbox's network namespace has only `lo` and no route: any
//      address that is not the sandbox's own fails with ENETUNREACH there. A raced
//      CONTINUE reaches nothing outside the sandbox, and nothing of the host.
//   4. Anything else: a fake address of the DNS stub (observer/fake_names.h) becomes its
//      name, any other literal stays the literal. On a thread of the idle pool (the
//      bridge that relays the CONNECT runs on the loop's thread, which must go on), a new
//      socket of the caller's family is bound to loopback, registered with the bridge
//      (observer/capture_route.h) with the CONNECT request vigil-init wrote (the caller's
//      name in one header, proxy/captured.h), connected to the bridge's capture listener,
//      and the proxy's answer head is read off it (never a byte past it).
//   5. 200: the caller's O_NONBLOCK, its fd's close-on-exec and its socket options
//      (TCP_NODELAY, SO_KEEPALIVE and the keepalive timers, SO_LINGER, SO_RCVTIMEO/
//      SO_SNDTIMEO, SO_PRIORITY, IP_TOS/IPV6_TCLASS) are copied onto it, it is put AT the
//      caller's descriptor number (SECCOMP_ADDFD_FLAG_SETFD, replacing the caller's own
//      socket), and connect() returns 0. (FLAG_SEND cannot be used: it would make the
//      installed number connect()'s result, and connect() returns 0.) A non-blocking
//      connect also returns 0 at once, connected: allowed by POSIX and handled by every
//      event loop (libuv, asyncio, Go's netpoll register the socket after connect()
//      returns); the caller's thread waits in connect() for the proxy's answer meanwhile.
//      Refused (403): ECONNREFUSED, which every client reports as a refusal; the proxy's
//      net.decision (captured, with the program) carries the reason and the block line.
//      The proxy could not connect (502/504): ECONNREFUSED / ETIMEDOUT.
// A socket the caller bound to a local address loses that binding (the proxy's
// connection is the one that leaves); a socket registered with epoll before connect()
// would keep watching the replaced one (no runtime we know does that).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "filters/seccomp_notify.h"
#include "observer/capture_route.h"
#include "observer/fake_names.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil::init {

struct InetCall {
  enum class Step {
    kNotInet,   // not an AF_INET/AF_INET6 socket: the unix broker's (or CONTINUE)
    kContinue,  // direct: loopback, or a call whose arguments the kernel judges alone
    kAnswer,    // answer `error` now
    kCapture,   // carry through the proxy (capture_inet_call)
    kDatagram,  // UDP to a remote address: to the sink (capture_datagram_call)
    kGone,      // the caller left: no answer
  };
  Step step = Step::kNotInet;
  int error = 0;
  UniqueFd socket;  // kCapture: the caller's socket, fetched (its options are copied)
  int family = 0;
  int caller_fd = -1;
  std::string host;  // kCapture: the name or literal CONNECT names
  std::uint16_t port = 0;
  std::string program;  // "comm (exe)", printable
};

// Reads and decides one connect() notification. `names`: the DNS stub's table.
InetCall prepare_inet_connect(const Notification& n, NotifyChannel& listener, const FakeNames& names);

// Performs a kCapture (blocks for the proxy's answer: run it on a thread of its own) and
// answers the caller.
void capture_inet_call(InetCall call, const Notification& n, NotifyChannel& listener,
                       CaptureRoute& route);

// Performs a kDatagram (does not block: run it on the loop's thread) and answers the
// caller: 0, its socket connected to the sink; ENETUNREACH without a sink (or for an
// IPv6-only socket, which cannot reach it).
void capture_datagram_call(InetCall call, const Notification& n, NotifyChannel& listener,
                           CaptureRoute& route);

// Asks the proxy to record the refusal of `peer`'s datagram (blocks for its answer).
void report_datagram(const DatagramPeer& peer, CaptureRoute& route);

// "CONNECT host:port" with the caller's name, as vigil-init sends it; with `datagram`,
// the header that makes it the record of a refused datagram (proxy/captured.h). Pure.
std::string capture_request(const std::string& host, std::uint16_t port, const std::string& program,
                            bool datagram = false);

// The status of an HTTP answer head ("HTTP/1.1 200 ..."), or 0. Pure.
int answer_status(const std::string& head);

}  // namespace vigil::init
