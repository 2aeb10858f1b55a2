// Where the proxy listens: a Unix socket (mode 0600, a stale one replaced, ours removed at
// stop) or TCP on loopback; an adopted listening socket; and the --listen syntax.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cstring>

#include "proxy/connection.h"
#include "proxy/server_impl.h"
#include "supervisor/core/base/display_text.h"

namespace vigil::proxy {

using tcp = asio::ip::tcp;

Result<void> Server::Impl::listen(const ListenAddress& where) {
  if (where.kind == ListenAddress::Kind::kUnix) {
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    if (where.path.empty() || where.path.size() >= sizeof sa.sun_path) {
      return make_error(Errc::kInvalidPolicy,
                        "unix socket path " + where.path + " is empty or longer than " +
                            std::to_string(sizeof sa.sun_path - 1) + " bytes");
    }
    std::memcpy(sa.sun_path, where.path.c_str(), where.path.size());
    struct stat st {};
    if (::lstat(where.path.c_str(), &st) == 0) {
      if (!S_ISSOCK(st.st_mode)) {
        return make_error(Errc::kRefused,
                          where.path + " exists and is not a socket: not replacing it");
      }
      // A socket file: replace it only if nobody is listening on it.
      UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
      if (!probe) return system_error("socket");
      if (::connect(probe.get(), reinterpret_cast<const sockaddr*>(&sa), sizeof sa) == 0) {
        return make_error(Errc::kRefused, where.path + ": another process is listening there");
      }
      if (::unlink(where.path.c_str()) != 0) return system_error("unlink " + where.path);
    }
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd) return system_error("socket");
    if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0) {
      return system_error("bind " + where.path);
    }
    if (::chmod(where.path.c_str(), 0600) != 0) return system_error("chmod " + where.path);
    if (::lstat(where.path.c_str(), &st) == 0) {
      unix_dev_ = st.st_dev;
      unix_ino_ = st.st_ino;
    }
    if (::listen(fd.get(), SOMAXCONN) != 0) return system_error("listen " + where.path);
    unix_path_ = where.path;
    bound_ = where;
    return adopt(std::move(fd));
  }
  boost::system::error_code ec;
  const IpAddress addr = asio::ip::make_address(where.host, ec);
  if (ec) return make_error(Errc::kInvalidPolicy, "not an IP address: " + where.host);
  const tcp::endpoint ep(addr, where.port);
  UniqueFd fd(
      ::socket(addr.is_v4() ? AF_INET : AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) return system_error("socket");
  const int one = 1;
  (void)::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd.get(), ep.data(), static_cast<socklen_t>(ep.size())) != 0) {
    return system_error("bind " + where.text());
  }
  if (::listen(fd.get(), SOMAXCONN) != 0) return system_error("listen " + where.text());
  bound_ = where;
  auto r = adopt(std::move(fd));
  if (!r) return r;
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getsockname(acceptor_.native_handle(), reinterpret_cast<sockaddr*>(&ss), &len) == 0) {
    bound_.port = ntohs(ss.ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(&ss)->sin_port
                                                : reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  }
  return {};
}

Result<void> Server::Impl::adopt(UniqueFd fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&ss), &len) != 0)
    return system_error("getsockname");
  const int family = ss.ss_family;
  if (family != AF_UNIX && family != AF_INET && family != AF_INET6) {
    return make_error(Errc::kUnsupported,
                      "the proxy listens on AF_UNIX, AF_INET or AF_INET6 sockets only");
  }
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags | O_NONBLOCK) != 0 ||
      ::fcntl(fd.get(), F_SETFD, FD_CLOEXEC) != 0) {
    return system_error("fcntl");
  }
  protocol_ = asio::generic::stream_protocol(family, family == AF_UNIX ? 0 : IPPROTO_TCP);
  error_code ec;
  acceptor_.assign(protocol_, fd.get(), ec);
  if (ec) return make_error(Errc::kSystem, "cannot watch the listening socket: " + ec.message());
  (void)fd.release();  // the acceptor owns it now
  if (bound_.path.empty() && bound_.host.empty()) {
    if (family == AF_UNIX) {
      bound_.kind = ListenAddress::Kind::kUnix;
      bound_.path = reinterpret_cast<sockaddr_un*>(&ss)->sun_path;
    } else {
      bound_.kind = ListenAddress::Kind::kTcp;
      char text[INET6_ADDRSTRLEN] = {};
      const void* src =
          family == AF_INET
              ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&ss)->sin_addr)
              : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&ss)->sin6_addr);
      ::inet_ntop(family, src, text, sizeof text);
      bound_.host = text;
      bound_.port = ntohs(family == AF_INET ? reinterpret_cast<sockaddr_in*>(&ss)->sin_port
                                            : reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
    }
  }
  return {};
}

// --- listen addresses --------------------------------------------------------------------

std::string ListenAddress::text() const {
  if (kind == Kind::kUnix) return "unix:" + path;
  const bool v6 = host.find(':') != std::string::npos;
  return "tcp:" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Result<ListenAddress> parse_listen_address(std::string_view text) {
  ListenAddress a;
  const auto bad = [&text](const std::string& why) {
    return make_error(Errc::kInvalidPolicy,
                      "--listen " + quote_for_message(text) + ": " + why +
                          " (write unix:/path/to/socket or tcp:127.0.0.1:PORT)");
  };
  if (text.substr(0, 5) == "unix:") {
    a.kind = ListenAddress::Kind::kUnix;
    a.path = std::string(text.substr(5));
    if (a.path.empty() || a.path.front() != '/') return bad("the socket path must be absolute");
    return a;
  }
  if (text.substr(0, 4) != "tcp:") return bad("unknown kind");
  std::string_view rest = text.substr(4);
  std::string_view host;
  std::string_view port;
  if (!rest.empty() && rest.front() == '[') {
    const std::size_t close = rest.find("]:");
    if (close == std::string_view::npos) return bad("missing ]:PORT");
    host = rest.substr(1, close - 1);
    port = rest.substr(close + 2);
  } else {
    const std::size_t colon = rest.rfind(':');
    if (colon == std::string_view::npos) return bad("missing :PORT");
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  boost::system::error_code ec;
  const IpAddress addr = asio::ip::make_address(std::string(host), ec);
  if (ec || !addr.is_loopback())
    return bad("the proxy listens on loopback only (127.0.0.1 or [::1])");
  if (port.empty() || port.size() > 5 ||
      !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return bad("bad port");
  }
  unsigned value = 0;
  for (char c : port) value = value * 10 + static_cast<unsigned>(c - '0');
  if (value > 65535) return bad("port out of range");
  a.kind = ListenAddress::Kind::kTcp;
  a.host = addr.to_string();
  a.port = static_cast<std::uint16_t>(value);
  return a;
}


// A new client: its Connection (connection.h), in the set the lifecycle (server_impl.cc)
// holds by ConnectionHandle.
void Server::Impl::spawn_connection(UniqueFd fd) {
  if (!metadata_started_) {
    // Runs while this client sends its request and its own host is resolved; a request
    // waits for it (bounded) only after that.
    metadata_started_ = true;
    asio::co_spawn(io_, guard_inputs_.lookup_metadata(*resolver_),
                   [self = shared_from_this()](std::exception_ptr) {});
    // One empty splice pipe, made once and kept while the server lives: tunnels opened one
    // after another (a tool fetching URL after URL) reuse it instead of a pipe2 and two
    // closes each. A failure here is not reported: the first tunnel that needs a pipe
    // makes one, or reports why it could not.
    if (splice_available() && options_.splice_tunnels) {
      if (auto pipe = pipes_.take()) pipes_.give(std::move(*pipe));
    }
  }
  const bool is_tcp = protocol_.family() != AF_UNIX;
  if (is_tcp) set_nodelay(fd.get());
  GenericSocket sock(io_);
  error_code ec;
  sock.assign(protocol_, fd.get(), ec);
  if (ec) return;  // fd closed by UniqueFd
  (void)fd.release();
  auto c = std::make_shared<Connection>(shared_from_this(), std::move(sock));
  connections_.insert(c.get());
  ++stats_.accepted;
  stats_.active = connections_.size();
  stats_.peak_active = std::max(stats_.peak_active, stats_.active);
  c->start();
}

}  // namespace vigil::proxy
