// HTTP requests on a connection: CONNECT tunnels and absolute-form requests (keep-alive,
// a decision for every request, the upstream reused only for the same host:port). What
// flows after the request head is connection_relay.cc.
//
// GCC 12 at -O2 reports -Wmismatched-new-delete on serve_request's own coroutine frame
// (Asio's awaitable frames pair their class-specific operator new and delete; the
// warning appears only since this member is defined outside its class, and clang does
// not emit it): a false positive, silenced for this file only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
#include "proxy/connection.h"
#include "proxy/captured.h"

#include <boost/asio/co_spawn.hpp>
#include <exception>

namespace vigil::proxy {

asio::awaitable<void> Connection::http_error(int status, std::string kind, std::string message) {
  co_await final_reply(http::error_response(status, kind, message));
}

asio::awaitable<void> Connection::serve_http() {
  bool first = true;
  while (true) {
    if (!first) {
      set_phase(in_.empty() ? Phase::kIdle : Phase::kHead,
                in_.empty() ? srv_->options().idle_timeout : srv_->options().head_timeout);
    }
    http::HeadScan scan;
    http::HeadParse<http::RequestHead> p;
    while (
        (p = http::parse_request_head(in_.view(), &scan, srv_->options().max_head_bytes)).state ==
        http::ParseState::kIncomplete) {
      if (srv_->stopping() && in_.empty()) co_return;
      const bool got = co_await read_into(client_, in_);
      if (!got) co_return;
      if (phase_ == Phase::kIdle) set_phase(Phase::kHead, srv_->options().head_timeout);
    }
    first = false;
    if (p.state == http::ParseState::kError) {
      co_await http_error(p.error.status, "bad-request", p.error.message);
      co_return;
    }
    in_.consume(p.size);
    if (http::iequals(p.head.method, "CONNECT")) {
      co_await serve_connect(p.head);
      co_return;
    }
    const bool more = co_await serve_request(p.head);
    if (!more) co_return;
  }
}

asio::awaitable<void> Connection::serve_connect(const http::RequestHead& head) {
  const http::TargetParse t = http::parse_authority_form(head.target);
  if (!t.ok) {
    co_await http_error(t.error.status, "bad-request", t.error.message);
    co_return;
  }
  TargetDecision d =
      decide_target(srv_->matcher(), NetProto::kConnect, t.target.host, t.target.port);
  if (srv_->options().captured) mark_captured(head, &d.event);  // proxy/captured.h
  co_await ask_if_off_list(d);  // ask mode: held, maybe allowed (proxy/ask.h)
  refuse_if_opaque(d, /*socks=*/false);
  if (!d.allowed()) {
    srv_->emit(d.event);
    co_await final_reply(http::refusal_response(d.event.reason));
    co_return;
  }
  const UpstreamResult up = co_await connect_upstream(d);
  if (up.outcome == UpstreamResult::Outcome::kRefused) {
    co_await final_reply(http::refusal_response(d.event.reason));
    co_return;
  }
  if (up.outcome == UpstreamResult::Outcome::kFailed) {
    co_await http_error(up.http_status, "upstream-unreachable", up.message);
    co_return;
  }
  const bool sent = co_await write_all(client_, http::connect_established());
  if (!sent) co_return;
  if (co_await terminate_tls(d)) co_return;
  co_await tunnel();
}

// One absolute-form request and its response. Returns whether the client connection
// carries on with another request.
asio::awaitable<bool> Connection::serve_request(const http::RequestHead& head) {
  const http::TargetParse t = http::parse_absolute_form(head.target);
  if (!t.ok) {
    co_await http_error(t.error.status, "bad-request", t.error.message);
    co_return false;
  }
  const http::FramingResult framing = http::request_framing(head);
  if (!framing.ok) {
    co_await http_error(framing.error.status, "bad-request", framing.error.message);
    co_return false;
  }
  // A new decision for every request, even on a connection that already has an
  // upstream: the policy speaks about each host:port, not about connections.
  TargetDecision d = decide_target(srv_->matcher(), NetProto::kHttp, t.target.host, t.target.port);
  co_await ask_if_off_list(d);  // ask mode: held, maybe allowed (proxy/ask.h)
  if (!d.allowed()) {
    srv_->emit(d.event);
    co_await final_reply(http::refusal_response(d.event.reason));
    co_return false;
  }
  const std::string key = d.event.host + ":" + std::to_string(d.event.port);
  const bool reuse =
      upstream_open_ && upstream_.is_open() && key == upstream_key_ && upstream_idle_and_open();
  if (reuse) {
    held_addresses_.reset();
    // Same host:port as the open upstream: the address was guarded when it was
    // connected; judge it again (interface addresses may have changed) instead of
    // resolving again.
    // A host routed to the user's MITM proxy was never guarded here: that hop owns it.
    const auto& mitm = srv_->mitm();
    const bool via_mitm = mitm && d.host && mitm->covers(*d.host, d.event.port);
    std::vector<IpAddress> passing =
        via_mitm ? std::vector<IpAddress>{upstream_address_}
                 : choose_addresses(d, {upstream_address_}, srv_->guard_context());
    if (passing.empty()) {
      drop_upstream();
      srv_->emit(d.event);
      co_await final_reply(http::refusal_response(d.event.reason));
      co_return false;
    }
    srv_->emit(d.event);
    set_phase(Phase::kStreaming, srv_->options().idle_timeout);
  } else {
    // A different host gets its own upstream connection.
    const UpstreamResult up = co_await connect_upstream(d);
    if (up.outcome == UpstreamResult::Outcome::kRefused) {
      co_await final_reply(http::refusal_response(d.event.reason));
      co_return false;
    }
    if (up.outcome == UpstreamResult::Outcome::kFailed) {
      co_await http_error(up.http_status, "upstream-unreachable", up.message);
      co_return false;
    }
  }

  const bool keep_client = http::client_wants_keep_alive(head) && !srv_->stopping();
  const std::string upstream_head =
      http::upstream_request_head(head, t.target, *d.host, !keep_client);
  const bool sent = co_await write_all(upstream_, upstream_head);
  if (!sent) {
    co_await http_error(502, "upstream-unreachable",
                        "the upstream connection closed before the request");
    co_return false;
  }

  // The request body flows while the response is read: a server may answer before
  // the body is complete (100-continue, early errors), and a client may wait for that.
  auto self = shared_from_this();
  body_done_ = framing.framing.kind == http::BodyFraming::Kind::kNone;
  body_failed_ = false;
  if (!body_done_) {
    asio::co_spawn(srv_->io(), relay_request_body(framing.framing),
                   [self](std::exception_ptr) {});
  }
  const Next next = co_await relay_response(head.method, keep_client);
  if (!body_done_ || body_failed_) {
    // The server answered before the whole body arrived (or the body broke): there is
    // no telling where the next request would start, and the body relay still owns
    // the client's read side. Cut.
    abort();
    co_return false;
  }
  if (next == Next::kKeep && !srv_->stopping()) co_return true;
  if (next != Next::kAbort) {
    co_await linger();
  }
  co_return false;
}

}  // namespace vigil::proxy
