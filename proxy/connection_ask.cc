// Ask mode (proxy/ask.h) on a connection: a request refused only because its host is off
// the allow list is resolved and guarded, then held while the session's client is asked.
#include "proxy/connection.h"

#include <boost/asio/post.hpp>
#include <utility>

namespace vigil::proxy {

// A host refused only because it is off the allow list, with an Asker: resolved and
// guarded first (what the guard refuses is refused, never asked: `d` becomes that
// refusal), then held until the answer. Allowed, `d` becomes an allowed decision
// (rule "ask:once" / "ask:session" / "ask:always") and connect_upstream uses the
// guarded addresses. Anything else leaves `d` a refusal, its reason saying why.
asio::awaitable<void> Connection::ask_if_off_list(TargetDecision& d) {
  if (!srv_->options().asker || d.allowed() || d.event.refused_by != refused_by::kNotAllowed ||
      !d.host) {
    co_return;
  }
  TargetDecision held = d;
  held.event.verdict = NetVerdict::kAllowed;
  held.event.refused_by = "";
  std::vector<IpAddress> resolved;
  if (held.needs_resolution()) {
    set_phase(Phase::kWaiting, srv_->options().resolve_timeout + std::chrono::seconds(5));
    auto addrs =
        co_await srv_->resolver().resolve(held.host->text, srv_->options().resolve_timeout);
    if (!addrs) co_return;  // nowhere to connect: refused as off the list, not asked
    resolved = std::move(*addrs);
    co_await srv_->metadata_ready();
  } else if (auto lit = literal_address(held)) {
    resolved.push_back(*lit);
  }
  std::vector<IpAddress> passing = choose_addresses(held, resolved, srv_->guard_context());
  if (passing.empty()) {
    d = std::move(held);
    co_return;
  }
  AskQuestion q{d.event.proto, d.event.host, d.event.port, passing.front().to_string(),
                srv_->options().ask_timeout};
  const AskAnswer a = co_await hold(std::move(q));
  set_phase(Phase::kHead, srv_->options().head_timeout);
  if (!allows(a)) {
    d.event.reason += a == AskAnswer::kDeny      ? " (asked: the answer was deny)"
                      : a == AskAnswer::kTimeout ? " (asked: no answer in time)"
                                                 : " (asked: the request ended first)";
    co_return;
  }
  held.event.rule = std::string("ask:") + to_string(a);
  held.event.reason = std::string("allowed when asked (") + to_string(a) + ")";
  held_addresses_ = std::move(passing);
  d = std::move(held);
}

// Asks and waits for the first of: the answer, the timeout, the connection's end.
asio::awaitable<AskAnswer> Connection::hold(AskQuestion q) {
  const auto timeout = q.timeout;
  ask_timer_ = std::make_shared<asio::steady_timer>(srv_->io());
  std::weak_ptr<asio::steady_timer> weak = ask_timer_;
  auto ticket = std::make_shared<AskTicket>(std::move(q), [ex = srv_->io().get_executor(), weak] {
    asio::post(ex, [weak] {
      if (auto t = weak.lock()) t->cancel();
    });
  });
  // However the hold ends (even the coroutine destroyed with the io_context), the ticket
  // is answered and can no longer post to this io_context.
  struct Release {
    std::shared_ptr<AskTicket> t;
    ~Release() {
      t->answer(AskAnswer::kCancelled);
      t->detach();
    }
  } release{ticket};
  set_phase(Phase::kWaiting, timeout + std::chrono::seconds(5));
  srv_->options().asker->ask(ticket);
  ask_timer_->expires_after(timeout);
  while (!ticket->result()) {
    auto [ec] = co_await ask_timer_->async_wait(kNoThrow);
    if (!ec) {
      ticket->answer(AskAnswer::kTimeout);
    } else if (!client_.is_open()) {
      ticket->answer(AskAnswer::kCancelled);
    }
    // Claimed by another thread that has not published it yet: its wake cancels this.
    if (!ticket->result()) ask_timer_->expires_at(Clock::time_point::max());
  }
  ask_timer_.reset();
  co_return *ticket->result();
}

}  // namespace vigil::proxy
