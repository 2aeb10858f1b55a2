#include "observer/inet_broker.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "observer/caller_names.h"
#include "observer/proc_dir.h"
#include "supervisor/core/events/syscall_table.h"

namespace vigil::init {
namespace {

// The proxy's answer must come within this (its own deadlines: resolve and connect 10 s
// each, an ask up to vigil.network.askTimeoutSeconds): past it the caller gets ETIMEDOUT.
constexpr int kAnswerTimeoutMs = 180'000;
constexpr std::size_t kMaxAnswerHead = 8192;

InetCall with(InetCall::Step step, int error = 0) {
  InetCall c;
  c.step = step;
  c.error = error;
  return c;
}

int sock_int(int fd, int level, int option, int* out) {
  socklen_t len = sizeof *out;
  return ::getsockopt(fd, level, option, out, &len) == 0 ? 0 : errno;
}

// Printable ASCII only: a name the program chose for itself never breaks the header line.
std::string printable(const std::string& s, std::size_t cap) {
  std::string out;
  for (char c : s.substr(0, cap)) out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  return out;
}

std::string program_of(pid_t pid) {
  char comm[64] = {};
  const std::size_t n = read_proc_file(pid, "comm", comm, sizeof comm - 1);
  std::string name(comm, n);
  while (!name.empty() && name.back() == '\n') name.pop_back();
  char exe[PATH_MAX];
  const ssize_t len = ::readlink((proc_dir(pid) + "/exe").c_str(), exe, sizeof exe);
  const std::string path = len > 0 ? std::string(exe, static_cast<std::size_t>(len)) : "";
  return printable(path.empty() ? name : name + " (" + path + ")", 180);
}

bool is_loopback_v4(std::uint32_t a) { return (a >> 24) == 127 || a == 0; }

// The address decided: direct (loopback), a name or literal for the proxy, or an error.
InetCall decide_address(const std::string& raw, int family, const FakeNames& names) {
  InetCall c = with(InetCall::Step::kCapture);
  if (raw.size() < sizeof(sa_family_t)) return with(InetCall::Step::kAnswer, EINVAL);
  sa_family_t af = 0;
  std::memcpy(&af, raw.data(), sizeof af);
  // AF_UNSPEC dissolves an association; another family is the kernel's EAFNOSUPPORT:
  // either way nothing is reached, and the kernel's answer is the right one.
  if (af != family) return with(InetCall::Step::kContinue);
  char text[INET6_ADDRSTRLEN] = {};
  if (family == AF_INET) {
    if (raw.size() < sizeof(sockaddr_in)) return with(InetCall::Step::kAnswer, EINVAL);
    sockaddr_in a{};
    std::memcpy(&a, raw.data(), sizeof a);
    const std::uint32_t v4 = ntohl(a.sin_addr.s_addr);
    if (is_loopback_v4(v4)) return with(InetCall::Step::kContinue);
    c.port = ntohs(a.sin_port);
    if (FakeNames::is_fake(v4)) {
      auto name = names.name_of(v4);
      if (!name) return with(InetCall::Step::kAnswer, EHOSTUNREACH);
      c.host = *name;
      return c;
    }
    ::inet_ntop(AF_INET, &a.sin_addr, text, sizeof text);
    c.host = text;
    return c;
  }
  if (raw.size() < sizeof(sockaddr_in6)) return with(InetCall::Step::kAnswer, EINVAL);
  sockaddr_in6 a{};
  std::memcpy(&a, raw.data(), sizeof a);
  std::array<std::uint8_t, 16> b{};
  std::memcpy(b.data(), &a.sin6_addr, 16);
  if (IN6_IS_ADDR_LOOPBACK(&a.sin6_addr) || IN6_IS_ADDR_UNSPECIFIED(&a.sin6_addr))
    return with(InetCall::Step::kContinue);
  c.port = ntohs(a.sin6_port);
  if (IN6_IS_ADDR_V4MAPPED(&a.sin6_addr)) {
    const std::uint32_t v4 = (std::uint32_t{b[12]} << 24) | (std::uint32_t{b[13]} << 16) |
                             (std::uint32_t{b[14]} << 8) | b[15];
    if (is_loopback_v4(v4)) return with(InetCall::Step::kContinue);
    if (FakeNames::is_fake(v4)) {
      auto name = names.name_of(v4);
      if (!name) return with(InetCall::Step::kAnswer, EHOSTUNREACH);
      c.host = *name;
      return c;
    }
  }
  if (FakeNames::is_fake_v6(b)) {
    auto name = names.name_of_v6(b);
    if (!name) return with(InetCall::Step::kAnswer, EHOSTUNREACH);
    c.host = *name;
    return c;
  }
  ::inet_ntop(AF_INET6, &a.sin6_addr, text, sizeof text);
  c.host = text;
  return c;
}

}  // namespace

std::string capture_request(const std::string& host, std::uint16_t port, const std::string& program,
                            bool datagram) {
  const bool v6 = host.find(':') != std::string::npos;
  const std::string authority = (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
  return "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority +
         "\r\nVigil-Program: " + printable(program, 200) +
         (datagram ? "\r\nVigil-Datagram: udp" : "") + "\r\n\r\n";
}

int answer_status(const std::string& head) {
  int status = 0;
  if (std::sscanf(head.c_str(), "HTTP/1.%*d %3d", &status) != 1) return 0;
  return status;
}

InetCall prepare_inet_connect(const Notification& n, NotifyChannel& listener, const FakeNames& names) {
  static const SocketSyscall* const row = find_socket_syscall("connect");
  const int fd = static_cast<int>(n.args[row->fd]);
  const std::uint64_t addr = n.args[row->addr];
  const int len = static_cast<int>(n.args[row->addrlen]);
  UniqueFd pidfd = task_pidfd(n.pid);
  if (!listener.id_valid(n.id)) return with(InetCall::Step::kGone);
  if (!pidfd) return with(InetCall::Step::kAnswer, ESRCH);
  UniqueFd sock(static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd.get(), fd, 0)));
  // Not fetched (EBADF, or a non-dumpable caller): the unix broker's reading decides,
  // and it never continues blind.
  if (!sock) return with(InetCall::Step::kNotInet);
  int family = 0, type = 0;
  if (sock_int(sock.get(), SOL_SOCKET, SO_DOMAIN, &family) != 0 ||
      (family != AF_INET && family != AF_INET6))
    return with(InetCall::Step::kNotInet);
  if (sock_int(sock.get(), SOL_SOCKET, SO_TYPE, &type) != 0) return with(InetCall::Step::kContinue);
  if (len < 0 || static_cast<std::size_t>(len) > sizeof(sockaddr_storage))
    return with(InetCall::Step::kAnswer, EINVAL);
  std::string raw(static_cast<std::size_t>(len), '\0');
  if (len > 0 && listener.read(n.pid, addr, raw.data(), raw.size()) != len)
    return with(InetCall::Step::kAnswer, EFAULT);
  if (!listener.id_valid(n.id)) return with(InetCall::Step::kGone);
  InetCall c = decide_address(raw, family, names);
  if (type != SOCK_STREAM) {
    // UDP: the sandbox's own loopback (the DNS stub) directly; anywhere else the sink's
    // (step 2). The rest (raw): the namespace has no route, and this says so at the call.
    if (c.step != InetCall::Step::kCapture) return c;
    if (type != SOCK_DGRAM) return with(InetCall::Step::kAnswer, ENETUNREACH);
    c.step = InetCall::Step::kDatagram;
  } else if (c.step != InetCall::Step::kCapture) {
    return c;
  }
  // Already connected or connecting: the kernel's own EISCONN / EALREADY (a datagram
  // socket may connect again: the new address replaces the old).
  sockaddr_storage peer{};
  socklen_t plen = sizeof peer;
  if (c.step == InetCall::Step::kCapture &&
      ::getpeername(sock.get(), reinterpret_cast<sockaddr*>(&peer), &plen) == 0)
    return with(InetCall::Step::kAnswer, EISCONN);
  c.socket = std::move(sock);
  c.family = family;
  c.caller_fd = fd;
  // A datagram socket's is read only if it sends (report_datagram): glibc's getaddrinfo
  // connects one per answer and never does.
  if (c.step == InetCall::Step::kCapture) c.program = program_of(n.pid);
  return c;
}

namespace {

// The caller's fd flags: close-on-exec lives in its descriptor table, read from fdinfo.
bool caller_cloexec(pid_t pid, int fd) {
  char buf[512] = {};
  const std::string name = "fdinfo/" + std::to_string(fd);
  if (read_proc_file(pid, name.c_str(), buf, sizeof buf - 1) == 0) return true;
  const char* flags = std::strstr(buf, "flags:");
  if (flags == nullptr) return true;
  const unsigned long f = std::strtoul(flags + 6, nullptr, 8);
  return (f & O_CLOEXEC) != 0;
}

// The options copied, as (level, name) of an int; SO_LINGER and the timeouts besides.
struct IntOption {
  int level, name;
};
std::array<IntOption, 7> int_options(int family) {
  return {{{IPPROTO_TCP, TCP_NODELAY},
           {SOL_SOCKET, SO_KEEPALIVE},
           {IPPROTO_TCP, TCP_KEEPIDLE},
           {IPPROTO_TCP, TCP_KEEPINTVL},
           {IPPROTO_TCP, TCP_KEEPCNT},
           {SOL_SOCKET, SO_PRIORITY},
           {family == AF_INET ? IPPROTO_IP : IPPROTO_IPV6, family == AF_INET ? IP_TOS : IPV6_TCLASS}}};
}

// What a new TCP socket of `family` holds for each int option: read once per family (a
// value equal to it is not set again: a dozen syscalls fewer per connection).
const std::array<int, 7>& fresh_values(int family) {
  static const auto read = [](int fam) {
    std::array<int, 7> v{};
    v.fill(-1);
    UniqueFd s(::socket(fam, SOCK_STREAM | SOCK_CLOEXEC, 0));
    const auto opts = int_options(fam);
    for (std::size_t i = 0; s && i < opts.size(); ++i) sock_int(s.get(), opts[i].level, opts[i].name, &v[i]);
    return v;
  };
  static const std::array<int, 7> v4 = read(AF_INET), v6 = read(AF_INET6);
  return family == AF_INET ? v4 : v6;
}

void copy_options(int from, int to, int family) {
  const auto opts = int_options(family);
  const auto& fresh = fresh_values(family);
  for (std::size_t i = 0; i < opts.size(); ++i) {
    int v = 0;
    if (sock_int(from, opts[i].level, opts[i].name, &v) == 0 && v != fresh[i])
      ::setsockopt(to, opts[i].level, opts[i].name, &v, sizeof v);
  }
  linger l{};
  socklen_t len = sizeof l;
  if (::getsockopt(from, SOL_SOCKET, SO_LINGER, &l, &len) == 0 && l.l_onoff != 0)
    ::setsockopt(to, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  for (int name : {SO_RCVTIMEO, SO_SNDTIMEO}) {
    timeval tv{};
    len = sizeof tv;
    if (::getsockopt(from, SOL_SOCKET, name, &tv, &len) == 0 && (tv.tv_sec != 0 || tv.tv_usec != 0))
      ::setsockopt(to, SOL_SOCKET, name, &tv, sizeof tv);
  }
}

// 127.0.0.1:port in `family` (v4-mapped for AF_INET6).
void loopback_address(int family, std::uint16_t port, sockaddr_storage* out) {
  if (family == AF_INET) {
    auto* a = reinterpret_cast<sockaddr_in*>(out);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a->sin_port = htons(port);
    return;
  }
  auto* a = reinterpret_cast<sockaddr_in6*>(out);
  a->sin6_family = AF_INET6;
  ::inet_pton(AF_INET6, "::ffff:127.0.0.1", &a->sin6_addr);
  a->sin6_port = htons(port);
}

// 127.0.0.1 with any port (*local) and with `port` (*to) in `family`: v4-mapped for a v6
// socket `fd`, which is made dual-stack for it. Returns the addresses' length.
socklen_t loopback_pair(int family, std::uint16_t port, int fd, sockaddr_storage* local,
                        sockaddr_storage* to) {
  if (family == AF_INET6) {
    const int off = 0;  // v4-mapped: the listener is 127.0.0.1
    ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
  }
  loopback_address(family, 0, local);
  loopback_address(family, port, to);
  return family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
}

std::uint16_t port_of(const sockaddr_storage& a) {
  return ntohs(a.ss_family == AF_INET ? reinterpret_cast<const sockaddr_in*>(&a)->sin_port
                                      : reinterpret_cast<const sockaddr_in6*>(&a)->sin6_port);
}

// A socket of `family` connected to the bridge's capture listener, its source port
// registered with `first` beforehand; the proxy's answer head read off it. Its status
// in *status (0: no answer).
UniqueFd open_through_proxy(int family, CaptureRoute& route, const std::string& first, int* status) {
  *status = 0;
  UniqueFd s(::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s) return s;
  sockaddr_storage local{}, to{};
  const socklen_t alen = loopback_pair(family, route.port(), s.get(), &local, &to);
  if (::bind(s.get(), reinterpret_cast<sockaddr*>(&local), alen) != 0) return UniqueFd();
  sockaddr_storage bound{};
  socklen_t blen = sizeof bound;
  ::getsockname(s.get(), reinterpret_cast<sockaddr*>(&bound), &blen);
  const std::uint16_t port = port_of(bound);
  route.expect(port, first);
  if (::connect(s.get(), reinterpret_cast<sockaddr*>(&to), alen) != 0) {
    route.forget(port);
    return UniqueFd();
  }
  // The head, and not a byte more: what follows is the tunnel's (an ssh banner).
  std::string head;
  while (head.size() < kMaxAnswerHead && head.find("\r\n\r\n") == std::string::npos) {
    pollfd p{s.get(), POLLIN, 0};
    if (::poll(&p, 1, kAnswerTimeoutMs) <= 0) return s;
    char buf[512];
    const ssize_t n = ::recv(s.get(), buf, sizeof buf, MSG_PEEK);
    if (n <= 0) return s;
    const std::string seen = head + std::string(buf, static_cast<std::size_t>(n));
    const std::size_t end = seen.find("\r\n\r\n");
    const std::size_t take = end == std::string::npos ? static_cast<std::size_t>(n)
                                                      : end + 4 - head.size();
    head.resize(head.size() + take);
    if (::recv(s.get(), head.data() + head.size() - take, take, 0) != static_cast<ssize_t>(take))
      return s;
  }
  *status = answer_status(head);
  return s;
}

}  // namespace

void capture_datagram_call(InetCall c, const Notification& n, NotifyChannel& listener,
                           CaptureRoute& route) {
  // The caller's own socket (our reference to it) is connected to the sink: nothing to
  // install, and what the caller set on it stays. A v6 socket reaches the sink v4-mapped;
  // one made IPv6-only cannot, and gets what the namespace would say.
  int error = ENETUNREACH;  // no sink: what the namespace would say
  sockaddr_storage local{}, to{};
  const socklen_t alen = c.family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  if (route.sink_port() != 0) {
    loopback_address(c.family, route.sink_port(), &to);
    socklen_t blen = sizeof local;
    if (::connect(c.socket.get(), reinterpret_cast<sockaddr*>(&to), alen) == 0 &&
        ::getsockname(c.socket.get(), reinterpret_cast<sockaddr*>(&local), &blen) == 0) {
      route.expect_datagram(port_of(local),
                            DatagramPeer{c.host, c.port, n.pid, c.family, std::move(c.socket)});
      error = 0;
    } else if (errno != ENETUNREACH && errno != EAFNOSUPPORT) {
      error = errno;
    }
  }
  c.socket.reset();
  listener.answer(n.id, 0, error);
}

void report_datagram(const DatagramPeer& peer, CaptureRoute& route) {
  int status = 0;
  open_through_proxy(peer.family, route,
                     capture_request(peer.host, peer.port, program_of(peer.pid), true), &status);
}

void capture_inet_call(InetCall c, const Notification& n, NotifyChannel& listener,
                       CaptureRoute& route) {
  int status = 0;
  UniqueFd s = open_through_proxy(c.family, route, capture_request(c.host, c.port, c.program),
                                  &status);
  int error = 0;
  if (!s) {
    error = ENETUNREACH;
  } else if (status == 0 || status == 504) {
    error = ETIMEDOUT;
  } else if (status != 200) {
    error = ECONNREFUSED;
  }
  if (error == 0) {
    copy_options(c.socket.get(), s.get(), c.family);
    const int fl = ::fcntl(c.socket.get(), F_GETFL);
    if (fl >= 0 && (fl & O_NONBLOCK) != 0) ::fcntl(s.get(), F_SETFL, ::fcntl(s.get(), F_GETFL) | O_NONBLOCK);
    const bool cloexec = caller_cloexec(n.pid, c.caller_fd);
    c.socket.reset();  // ours goes first: the caller's table then holds the only reference
    const long got = listener.install_fd_at(n.id, s.get(), c.caller_fd, cloexec);
    s.reset();
    if (got == -ENOENT) return;  // the caller is gone
    if (got < 0) error = static_cast<int>(-got);
  }
  c.socket.reset();
  listener.answer(n.id, 0, error);
}

}  // namespace vigil::init
