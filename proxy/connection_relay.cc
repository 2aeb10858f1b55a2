// What flows after an HTTP request head: the request body (while the response is read),
// 1xx responses, and the final response, every body forwarded byte for byte and framed
// exactly as its head said (Content-Length, chunked: chunked.h, or until close).
#include "proxy/connection.h"

#include <algorithm>

#include "proxy/chunked.h"

namespace vigil::proxy {

asio::awaitable<void> Connection::relay_request_body(http::BodyFraming framing) {
  std::uint64_t remaining = framing.length;
  http::ChunkedScanner chunks;
  while (true) {
    if (in_.empty()) {
      const bool got = co_await read_into(client_, in_);
      if (!got) {
        body_failed_ = true;
        co_return;
      }
    }
    std::size_t take = 0;
    bool done = false;
    if (framing.kind == http::BodyFraming::Kind::kLength) {
      take = static_cast<std::size_t>(std::min<std::uint64_t>(remaining, in_.size()));
      remaining -= take;
      done = remaining == 0;
    } else {
      const auto step = chunks.feed(in_.view());
      if (step.error) {
        body_failed_ = true;
        abort();
        co_return;
      }
      take = step.consumed;
      done = step.done;
    }
    const bool written = co_await write_all(upstream_, in_.view().substr(0, take));
    if (!written) {
      body_failed_ = true;
      co_return;
    }
    srv_->stats().bytes_up += take;
    in_.consume(take);
    if (done) break;
  }
  body_done_ = true;
}

// Relays 1xx responses and the final response, and says what the client connection
// does next. Never reads from the client (the request body relay may be doing so);
// the caller lingers or aborts. Keeps the upstream open only when it can be reused.
asio::awaitable<Connection::Next> Connection::relay_response(std::string method, bool keep_client) {
  bool sent_anything = false;
  while (true) {
    http::HeadScan scan;
    http::HeadParse<http::ResponseHead> p;
    while ((p = http::parse_response_head(up_in_.view(), &scan, srv_->options().max_head_bytes))
               .state == http::ParseState::kIncomplete) {
      const bool got = co_await read_into(upstream_, up_in_);
      if (!got) {
        drop_upstream();
        if (sent_anything) co_return Next::kAbort;
        std::string reply = http::error_response(502, "upstream-unreachable",
                                                 "the upstream server closed without a response");
        const bool sent = co_await write_all(client_, reply);
        co_return sent ? Next::kClose : Next::kAbort;
      }
    }
    if (p.state == http::ParseState::kError) {
      drop_upstream();
      if (sent_anything) co_return Next::kAbort;
      std::string reply = http::error_response(502, "bad-upstream-response", p.error.message);
      const bool sent = co_await write_all(client_, reply);
      co_return sent ? Next::kClose : Next::kAbort;
    }
    up_in_.consume(p.size);
    const http::FramingResult f = http::response_framing(p.head, method);
    if (!f.ok || p.head.status == 101) {
      drop_upstream();
      if (sent_anything) co_return Next::kAbort;
      std::string reply = http::error_response(
          502, "bad-upstream-response",
          f.ok ? "upstream switched protocols (upgrades are not proxied)" : f.error.message);
      const bool sent = co_await write_all(client_, reply);
      co_return sent ? Next::kClose : Next::kAbort;
    }
    if (p.head.status < 200) {  // 100 Continue, 103 Early Hints: forward, then the real one
      std::string interim = http::client_response_head(p.head, false);
      const bool sent = co_await write_all(client_, interim);
      if (!sent) co_return Next::kAbort;
      sent_anything = true;
      continue;
    }
    const bool close_client =
        !keep_client || f.framing.kind == http::BodyFraming::Kind::kUntilClose;
    std::string response_head = http::client_response_head(p.head, close_client);
    // The head goes out with the first body bytes (relay_response_body).
    const bool body_ok = co_await relay_response_body(f.framing, std::move(response_head));
    if (!body_ok) co_return Next::kAbort;  // truncated: the client must see the cut
    const bool reusable =
        !close_client && http::upstream_keeps_alive(p.head, f.framing) && up_in_.empty();
    if (!reusable) drop_upstream();
    co_return close_client ? Next::kClose : Next::kKeep;
  }
}

// Relays the body, sending `head` (the response head) together with the first body
// bytes: a small response then reaches the client as one segment.
asio::awaitable<bool> Connection::relay_response_body(http::BodyFraming framing, std::string head) {
  using Kind = http::BodyFraming::Kind;
  if (framing.kind == Kind::kNone) {
    const bool sent = co_await write_all(client_, head);
    co_return sent;
  }
  std::uint64_t remaining = framing.length;
  http::ChunkedScanner chunks;
  while (true) {
    if (up_in_.empty()) {
      if (!head.empty()) {  // nothing of the body yet: do not hold the head back for it
        const bool sent = co_await write_all(client_, head);
        if (!sent) co_return false;
        head.clear();
      }
      auto [ec, n] = co_await upstream_.async_read_some(up_in_.prepare(), kNoThrow);
      if (ec == asio::error::eof && framing.kind == Kind::kUntilClose) co_return true;
      if (ec || n == 0) co_return false;  // truncated: the client must see the cut
      up_in_.commit(n);
      touch();
    }
    std::size_t take = up_in_.size();
    bool done = false;
    if (framing.kind == Kind::kLength) {
      take = static_cast<std::size_t>(std::min<std::uint64_t>(remaining, take));
      remaining -= take;
      done = remaining == 0;
    } else if (framing.kind == Kind::kChunked) {
      const auto step = chunks.feed(up_in_.view());
      if (step.error) co_return false;
      take = step.consumed;
      done = step.done;
    }
    const bool written = co_await write_all(client_, head, up_in_.view().substr(0, take));
    if (!written) co_return false;
    head.clear();
    srv_->stats().bytes_down += take;
    up_in_.consume(take);
    if (done) co_return true;
  }
}

}  // namespace vigil::proxy
