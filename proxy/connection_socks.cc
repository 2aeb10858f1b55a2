// SOCKS on a connection: SOCKS5 CONNECT (no authentication), and SOCKS4 refused with a
// SOCKS4 answer so the client fails at once.
#include "proxy/connection.h"

#include <arpa/inet.h>

namespace vigil::proxy {

asio::awaitable<void> Connection::serve_socks4() {
  // Best effort for the event: SOCKS4 carries the port and IPv4 address up front.
  NetDecision d;
  d.proto = NetProto::kSocks4;
  const auto b = bytes(in_.view());
  if (b.size() >= 8) {
    d.port = static_cast<std::uint16_t>((b[2] << 8) | b[3]);
    char text[INET_ADDRSTRLEN] = {};
    if (::inet_ntop(AF_INET, b.data() + 4, text, sizeof text) != nullptr) d.host = text;
  }
  d.refused_by = refused_by::kUnsupportedProtocol;
  d.reason = "SOCKS4 is not supported: use SOCKS5 (socks5h://)";
  srv_->emit(d);
  co_await write_bytes(socks5::socks4_rejection());
  co_await linger();
}

asio::awaitable<void> Connection::serve_socks5() {
  socks5::Greeting g;
  while ((g = socks5::parse_greeting(bytes(in_.view()))).state ==
         socks5::ParseState::kIncomplete) {
    const bool got = co_await read_into(client_, in_);
    if (!got) co_return;
  }
  if (g.state == socks5::ParseState::kError) co_return;
  in_.consume(g.size);
  const bool sent = co_await write_bytes(socks5::method_reply(g.offers_no_auth));
  if (!sent || !g.offers_no_auth) co_return;

  socks5::Request req;
  while ((req = socks5::parse_request(bytes(in_.view()))).state ==
         socks5::ParseState::kIncomplete) {
    const bool got = co_await read_into(client_, in_);
    if (!got) co_return;
  }
  if (req.state == socks5::ParseState::kError) {
    co_await write_bytes(socks5::reply(req.reply));
    co_return;
  }
  in_.consume(req.size);
  TargetDecision d = decide_target(srv_->matcher(), NetProto::kSocks5, req.host, req.port);
  co_await ask_if_off_list(d);  // ask mode: held, maybe allowed (proxy/ask.h)
  refuse_if_opaque(d, /*socks=*/true);
  if (!d.allowed()) {
    srv_->emit(d.event);
    co_await write_bytes(socks5::reply(socks5::Reply::kNotAllowed));
    co_return;
  }
  const UpstreamResult up = co_await connect_upstream(d);
  if (up.outcome != UpstreamResult::Outcome::kConnected) {
    co_await write_bytes(socks5::reply(up.socks_reply));
    co_return;
  }
  const bool sent_ok = co_await write_bytes(socks5::reply(socks5::Reply::kSucceeded));
  if (!sent_ok) co_return;
  co_await tunnel();
}

}  // namespace vigil::proxy
