#include "observer/bridge.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>

namespace vigil::init {

// One direction of a relayed connection: bytes read from `from`, waiting to be written
// to `to`.
struct Bridge::Relay {
  std::vector<char> buf = std::vector<char>(kRelayBuffer);
  std::size_t start = 0, end = 0;  // pending bytes are buf[start, end)
  bool eof = false;                // `from` said EOF (or failed): nothing more will come
  bool shut = false;               // EOF passed on with shutdown(to, SHUT_WR)
  bool pending() const { return end > start; }
  bool full() const { return end == buf.size(); }
};

struct Bridge::Pair {
  std::uint64_t id;
  UniqueFd client;    // the command's TCP connection
  UniqueFd upstream;  // the proxy's Unix socket
  Relay up;           // client -> upstream
  Relay down;         // upstream -> client
  bool registered = false;
  bool done() const { return up.shut && down.shut && !up.pending() && !down.pending(); }
};

namespace {

// Tag layout: kBridgeTagBit | (id << 2) | side; id 0 with side 3 marks listener N.
constexpr std::uint64_t kListenerTag = kBridgeTagBit | 3;
std::uint64_t tag_of(std::uint64_t id, int side) {
  return kBridgeTagBit | (id << 2) | static_cast<std::uint64_t>(side);
}

Result<UniqueFd> listen_loopback(std::uint16_t port, const std::string& address) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) return system_error("socket");
  const int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  if (::inet_pton(AF_INET, address.c_str(), &a.sin_addr) != 1)
    return make_error(Errc::kInvalidPolicy, "the bridge's address is not IPv4: " + address);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    return system_error("bind " + address + ":" + std::to_string(port));
  }
  if (::listen(fd.get(), 128) != 0) return system_error("listen");
  return fd;
}

// Reads into the relay's free space. False on EOF or error.
bool fill(int from, std::vector<char>& buf, std::size_t& start, std::size_t& end) {
  if (start == end) start = end = 0;
  if (end == buf.size()) return true;
  const ssize_t n = ::read(from, buf.data() + end, buf.size() - end);
  if (n > 0) {
    end += static_cast<std::size_t>(n);
    return true;
  }
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return true;
  return false;
}

// Writes what is pending. False when the peer is gone.
bool drain(int to, std::vector<char>& buf, std::size_t& start, std::size_t& end) {
  while (start < end) {
    const ssize_t n = ::send(to, buf.data() + start, end - start, MSG_NOSIGNAL);
    if (n > 0) {
      start += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return true;
    return false;
  }
  start = end = 0;  // all delivered: the whole buffer is free again
  return true;
}

}  // namespace

Result<Bridge> Bridge::listen(const std::vector<Route>& routes,
                              std::shared_ptr<CaptureRoute> capture, const std::string& address) {
  Bridge b;
  std::vector<Route> all = routes;
  if (capture) all.push_back({0, capture->upstream()});
  for (std::size_t i = 0; i < all.size(); ++i) {
    const Route& r = all[i];
    if (r.path.size() >= sizeof(sockaddr_un{}.sun_path)) {
      return make_error(Errc::kInvalidPolicy, "proxy socket path too long: " + r.path);
    }
    auto fd = listen_loopback(r.port, i < routes.size() ? address : "127.0.0.1");
    VIGIL_TRY(fd);
    b.listeners_.push_back(std::move(fd).value());
    b.targets_.push_back(r.path);
  }
  if (capture) {
    sockaddr_in a{};
    socklen_t len = sizeof a;
    if (::getsockname(b.listeners_.back().get(), reinterpret_cast<sockaddr*>(&a), &len) != 0)
      return system_error("getsockname of the capture listener");
    capture->set_port(ntohs(a.sin_port));
    b.capture_ = std::move(capture);
  }
  return b;
}

bool Bridge::captured_listener(std::size_t index, int client, std::string* first) {
  if (!capture_ || index + 1 != listeners_.size()) return true;  // an ordinary bridge
  sockaddr_storage peer{};
  socklen_t len = sizeof peer;
  if (::getpeername(client, reinterpret_cast<sockaddr*>(&peer), &len) != 0) return false;
  // The broker's sockets are AF_INET or AF_INET6 bound to v4-mapped 127.0.0.1: both
  // arrive here as AF_INET (the listener is 127.0.0.1).
  if (peer.ss_family != AF_INET) return false;
  // From 127.0.0.1 only, where the broker binds: in an agent session's shared namespace
  // another command could connect from another loopback address at a registered port.
  if (reinterpret_cast<sockaddr_in*>(&peer)->sin_addr.s_addr != htonl(INADDR_LOOPBACK))
    return false;
  auto got = capture_->take(ntohs(reinterpret_cast<sockaddr_in*>(&peer)->sin_port));
  if (!got) return false;  // not a connection the broker made: closed at once
  *first = std::move(*got);
  return true;
}

Bridge::~Bridge() = default;
Bridge::Bridge(Bridge&&) noexcept = default;
Bridge& Bridge::operator=(Bridge&&) noexcept = default;

Result<void> Bridge::attach(int epoll_fd) {
  for (std::size_t i = 0; i < listeners_.size(); ++i) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = kListenerTag | (static_cast<std::uint64_t>(i) << 2);
    if (::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listeners_[i].get(), &ev) != 0) {
      return system_error("epoll_ctl");
    }
  }
  return {};
}

void Bridge::accept_from(int epoll_fd, std::size_t index) {
  const int listener = listeners_[index].get();
  const std::string& target = targets_[index];
  while (true) {
    UniqueFd client(::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!client) return;                                    // EAGAIN: accepted everything pending
    if (pairs_.size() >= kMaxRelayedConnections) continue;  // refused: closed at once
    // TCP_NODELAY: what the proxy hands over goes out as it comes. A TLS helper writes a
    // response's head and body as two records; without it the second waited for the
    // client's ACK of the first, milliseconds per request.
    const int one = 1;
    (void)::setsockopt(client.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    std::string first;
    if (!captured_listener(index, client.get(), &first)) continue;
    UniqueFd up(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!up) continue;
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path, target.c_str(), target.size());
    if (::connect(up.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 &&
        errno != EINPROGRESS && errno != EAGAIN) {
      continue;  // the proxy is gone: the client sees its connection closed
    }
    auto p = std::make_unique<Pair>();
    p->id = next_id_++;
    p->client = std::move(client);
    p->upstream = std::move(up);
    // The broker's CONNECT goes first (bounded: vigil-init wrote it, far below a buffer).
    const std::size_t n = std::min(first.size(), p->up.buf.size());
    std::memcpy(p->up.buf.data(), first.data(), n);
    p->up.end = n;
    Pair& ref = *p;
    pairs_.emplace(ref.id, std::move(p));
    update_interest(epoll_fd, ref);
  }
}

void Bridge::update_interest(int epoll_fd, Pair& p) {
  // Read from a side only while the buffer it feeds has room; write when data waits.
  auto want = [](const Relay& in_from, const Relay& out_to) {
    std::uint32_t e = 0;
    if (!in_from.eof && !in_from.full()) e |= EPOLLIN;
    if (out_to.pending()) e |= EPOLLOUT;
    return e;
  };
  epoll_event ce{}, ue{};
  ce.events = want(p.up, p.down);
  ce.data.u64 = tag_of(p.id, 0);
  ue.events = want(p.down, p.up);
  ue.data.u64 = tag_of(p.id, 1);
  const int op = p.registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
  ::epoll_ctl(epoll_fd, op, p.client.get(), &ce);
  ::epoll_ctl(epoll_fd, op, p.upstream.get(), &ue);
  p.registered = true;
}

void Bridge::pump(int epoll_fd, Pair& p) {
  bool alive = true;
  if (!p.up.eof && !fill(p.client.get(), p.up.buf, p.up.start, p.up.end)) p.up.eof = true;
  if (!p.down.eof && !fill(p.upstream.get(), p.down.buf, p.down.start, p.down.end))
    p.down.eof = true;
  alive = drain(p.upstream.get(), p.up.buf, p.up.start, p.up.end) && alive;
  alive = drain(p.client.get(), p.down.buf, p.down.start, p.down.end) && alive;
  // Half-close: pass an EOF on once everything before it was delivered.
  if (p.up.eof && !p.up.pending() && !p.up.shut) {
    ::shutdown(p.upstream.get(), SHUT_WR);
    p.up.shut = true;
  }
  if (p.down.eof && !p.down.pending() && !p.down.shut) {
    ::shutdown(p.client.get(), SHUT_WR);
    p.down.shut = true;
  }
  if (!alive || p.done()) {
    ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, p.client.get(), nullptr);
    ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, p.upstream.get(), nullptr);
    pairs_.erase(p.id);  // closes both fds
    return;
  }
  update_interest(epoll_fd, p);
}

bool Bridge::handle(int epoll_fd, std::uint64_t tag, std::uint32_t /*events*/) {
  if ((tag & kBridgeTagBit) == 0) return false;
  if ((tag & 3) == 3) {
    const std::size_t index = static_cast<std::size_t>((tag & ~kBridgeTagBit) >> 2);
    if (index < listeners_.size()) accept_from(epoll_fd, index);
    return true;
  }
  const std::uint64_t id = (tag & ~kBridgeTagBit) >> 2;
  auto it = pairs_.find(id);
  if (it != pairs_.end()) pump(epoll_fd, *it->second);
  return true;
}

}  // namespace vigil::init
