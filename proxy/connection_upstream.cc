// Connecting upstream for one request: resolve once, guard every address, connect to one
// that passed (directly, or through network.parentProxy), and emit the decision once the
// connect has settled.
#include "proxy/connection.h"

#include <sys/socket.h>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <cerrno>
#include <utility>

#include "supervisor/core/base/unique_fd.h"

namespace vigil::proxy {

// Resolve once, guard, connect to an address that passed. Emits the decision (allowed,
// or refused by the guard) and, on failure, an upstream failure.
asio::awaitable<UpstreamResult> Connection::connect_upstream(TargetDecision& d) {
  UpstreamResult r;
  if (const auto& mitm = srv_->mitm(); mitm && d.host && mitm->covers(*d.host, d.event.port)) {
    held_addresses_.reset();
    co_return co_await connect_via_mitm(d, *mitm);
  }
  std::vector<IpAddress> resolved;
  if (held_addresses_) {
    // Allowed when asked: the addresses the guard passed before the question, never a
    // second resolution.
    resolved = std::move(*held_addresses_);
    held_addresses_.reset();
  } else if (d.needs_resolution()) {
    set_phase(Phase::kWaiting, srv_->options().resolve_timeout + std::chrono::seconds(5));
    auto addrs = co_await srv_->resolver().resolve(d.host->text, srv_->options().resolve_timeout);
    if (!addrs) {
      srv_->emit(d.event);  // the allowlist allowed it; the lookup failed
      r.message = "could not resolve " + d.event.host + " (" + addrs.error().message + ")";
      r.socks_reply = socks5::Reply::kHostUnreachable;
      srv_->emit(NetUpstreamFailure{d.event.proto, d.event.host, d.event.port, "", r.message});
      co_return r;
    }
    resolved = std::move(*addrs);
    co_await srv_->metadata_ready();
  } else if (auto lit = literal_address(d)) {
    resolved.push_back(*lit);
  }
  const std::vector<IpAddress> passing = choose_addresses(d, resolved, srv_->guard_context());
  if (passing.empty()) {
    srv_->emit(d.event);
    r.outcome = UpstreamResult::Outcome::kRefused;
    r.http_status = 403;
    r.socks_reply = socks5::Reply::kNotAllowed;
    co_return r;
  }
  // An allowed decision is emitted once the connect is settled, naming the address the
  // bytes go to: emitted before, it named the first address, and when that one failed
  // and a later one answered, the log showed an address never connected to.
  unsettled_ = d.event;
  drop_upstream();
  set_phase(Phase::kConnecting, srv_->options().connect_timeout);
  connect_timed_out_ = false;
  if (const auto& route = srv_->parent()) {
    if (const ProxyEndpoint* via = route->via(d.event.proto, d.event.host, d.event.port)) {
      co_return co_await connect_via_parent(d, *via, passing.front());
    }
  }
  error_code last;
  IpAddress last_address;
  for (const auto& addr : passing) {
    last_address = addr;
    const int fd = ::socket(addr.is_v4() ? AF_INET : AF_INET6,
                            SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
      last = error_code(errno, boost::system::system_category());
      continue;
    }
    UniqueFd owned(fd);
    error_code ec;
    upstream_.assign(addr.is_v4() ? tcp::v4() : tcp::v6(), owned.get(), ec);
    if (ec) {
      last = ec;
      continue;
    }
    (void)owned.release();  // the socket owns it now
    auto [cec] = co_await upstream_.async_connect(tcp::endpoint(addr, d.event.port), kNoThrow);
    if (!cec) {
      set_nodelay(upstream_.native_handle());
      upstream_open_ = true;
      upstream_key_ = d.event.host + ":" + std::to_string(d.event.port);
      upstream_address_ = addr;
      emit_unsettled(addr.to_string());
      r.outcome = UpstreamResult::Outcome::kConnected;
      set_phase(Phase::kStreaming, srv_->options().idle_timeout);
      co_return r;
    }
    last = cec;
    error_code ignored;
    upstream_.close(ignored);
    if (connect_timed_out_ || !client_.is_open()) break;
  }
  if (connect_timed_out_) {
    r.http_status = 504;
    r.socks_reply = socks5::Reply::kTtlExpired;
    r.message = "connecting to " + d.event.host + " (" + last_address.to_string() + ") port " +
                std::to_string(d.event.port) + " timed out";
  } else {
    r.http_status = 502;
    r.socks_reply = last == asio::error::connection_refused ? socks5::Reply::kConnectionRefused
                                                            : socks5::Reply::kHostUnreachable;
    r.message = "connecting to " + d.event.host + " (" + last_address.to_string() + ") port " +
                std::to_string(d.event.port) + " failed: " + last.message();
  }
  emit_unsettled({});  // allowed; the address is the first one tried
  srv_->emit(NetUpstreamFailure{d.event.proto, d.event.host, d.event.port, last_address.to_string(),
                             r.message});
  co_return r;
}

// The decision is made (allow list, address guard): the bytes go out through the
// parent proxy, which is asked with CONNECT for the name the client gave. The answer
// head is read one byte at a time so that no byte of the tunnel after it is taken.
asio::awaitable<UpstreamResult> Connection::connect_via_parent(TargetDecision& d, const ProxyEndpoint& via,
                                                   const IpAddress& guarded) {
  UpstreamResult r;
  r.http_status = 502;
  r.socks_reply = socks5::Reply::kGeneralFailure;
  auto fail = [&](const std::string& what) {
    r.message = "parent proxy " + via.text() + ": " + what;
    error_code ignored;
    upstream_.close(ignored);
    emit_unsettled({});
    srv_->emit(NetUpstreamFailure{d.event.proto, d.event.host, d.event.port, via.text(), r.message});
    return r;
  };
  std::vector<IpAddress> addrs;
  error_code pec;
  const IpAddress literal = asio::ip::make_address(via.host, pec);
  if (!pec) {
    addrs.push_back(literal);
  } else {
    auto found = co_await srv_->resolver().resolve(via.host, srv_->options().resolve_timeout);
    if (!found) co_return fail("could not resolve (" + found.error().message + ")");
    addrs = std::move(*found);
  }
  bool connected = false;
  std::string why = "no address";
  for (const auto& addr : addrs) {
    const int fd = ::socket(addr.is_v4() ? AF_INET : AF_INET6,
                            SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) continue;
    UniqueFd owned(fd);
    error_code ec;
    upstream_.assign(addr.is_v4() ? tcp::v4() : tcp::v6(), owned.get(), ec);
    if (ec) continue;
    (void)owned.release();
    auto [cec] = co_await upstream_.async_connect(tcp::endpoint(addr, via.port), kNoThrow);
    if (!cec) {
      connected = true;
      break;
    }
    why = cec.message();
    error_code ignored;
    upstream_.close(ignored);
    if (connect_timed_out_ || !client_.is_open()) break;
  }
  if (!connected) co_return fail(connect_timed_out_ ? "connect timed out" : why);
  co_return co_await ask_parent_for_tunnel(d, "parent proxy " + via.text(), via.text(), guarded);
}

// network.mitmProxy: the allow list decided; the user's MITM proxy on its Unix socket is
// asked for the tunnel (it resolves the name: no address guard, as srt documents).
asio::awaitable<UpstreamResult> Connection::connect_via_mitm(TargetDecision& d,
                                                             const MitmRoute& via) {
  unsettled_ = d.event;
  drop_upstream();
  set_phase(Phase::kConnecting, srv_->options().connect_timeout);
  connect_timed_out_ = false;
  const std::string name = "MITM proxy unix:" + via.socket_path;
  asio::local::stream_protocol::socket local(upstream_.get_executor());
  auto [ec] = co_await local.async_connect(
      asio::local::stream_protocol::endpoint(via.socket_path), kNoThrow);
  if (ec) {
    UpstreamResult r;
    r.http_status = 502;
    r.socks_reply = socks5::Reply::kGeneralFailure;
    r.message = name + ": " + (connect_timed_out_ ? std::string("connect timed out") : ec.message());
    emit_unsettled({});
    srv_->emit(NetUpstreamFailure{d.event.proto, d.event.host, d.event.port, "", r.message});
    co_return r;
  }
  // The relay reads and writes (and splices) the descriptor whatever its family.
  error_code aec;
  const int fd = local.release(aec);
  upstream_.assign(tcp::v4(), fd, aec);
  if (aec) {
    UniqueFd owned(fd);
    UpstreamResult r;
    r.http_status = 502;
    r.socks_reply = socks5::Reply::kGeneralFailure;
    r.message = name + ": " + aec.message();
    emit_unsettled({});
    srv_->emit(NetUpstreamFailure{d.event.proto, d.event.host, d.event.port, "", r.message});
    co_return r;
  }
  co_return co_await ask_parent_for_tunnel(d, name, "", std::nullopt);
}

// Connected to a proxy of the user's (parent or MITM): ask it with CONNECT for the name
// the client gave. The answer head is read one byte at a time so that no byte of the
// tunnel after it is taken.
asio::awaitable<UpstreamResult> Connection::ask_parent_for_tunnel(
    TargetDecision& d, std::string via, std::string via_address,
    std::optional<IpAddress> guarded) {
  UpstreamResult r;
  r.http_status = 502;
  r.socks_reply = socks5::Reply::kGeneralFailure;
  auto fail = [&](const std::string& what) {
    r.message = via + ": " + what;
    error_code ignored;
    upstream_.close(ignored);
    emit_unsettled({});
    srv_->emit(
        NetUpstreamFailure{d.event.proto, d.event.host, d.event.port, via_address, r.message});
    return r;
  };
  if (!co_await write_all(upstream_, connect_request(d.event.host, d.event.port)))
    co_return fail("writing CONNECT failed");
  std::string head;
  char c = 0;
  while (!head.ends_with("\r\n\r\n")) {
    if (head.size() >= srv_->options().max_head_bytes) co_return fail("answer head too large");
    auto [ec, n] = co_await upstream_.async_read_some(asio::buffer(&c, 1), kNoThrow);
    if (ec || n == 0) co_return fail("closed before answering the CONNECT");
    head.push_back(c);
  }
  auto code = parse_connect_reply(head);
  if (!code) co_return fail(code.error().message);
  if (*code < 200 || *code > 299) {
    co_return fail("answered " + head.substr(0, head.find('\r')) + " to CONNECT " + d.event.host +
                   ":" + std::to_string(d.event.port));
  }
  if (guarded) set_nodelay(upstream_.native_handle());
  upstream_open_ = true;
  upstream_key_ = d.event.host + ":" + std::to_string(d.event.port);
  // What a reused connection is judged by again; none for the MITM hop, which is
  // reused only for the same host (upstream_key_).
  if (guarded) upstream_address_ = *guarded;
  emit_unsettled(guarded ? d.event.address : std::string());
  r.outcome = UpstreamResult::Outcome::kConnected;
  set_phase(Phase::kStreaming, srv_->options().idle_timeout);
  co_return r;
}

// Emits the allowed decision of the connect in progress, if any, once: `address` is
// the one connected to, empty when none was (the first address tried stays).
void Connection::emit_unsettled(const std::string& address) {
  if (!unsettled_) return;
  NetDecision d = std::move(*unsettled_);
  unsettled_.reset();
  if (!address.empty()) d.address = address;
  srv_->emit(d);
}

// A kept-alive upstream is reusable only if the server has neither closed it nor sent
// anything unasked (servers close idle connections on their own schedule).
bool Connection::upstream_idle_and_open() {
  char byte = 0;
  const ssize_t n = ::recv(upstream_.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
  drop_upstream();
  return false;
}

void Connection::drop_upstream() {
  error_code ec;
  upstream_.close(ec);
  upstream_open_ = false;
  up_in_.consume(up_in_.size());
}

}  // namespace vigil::proxy
