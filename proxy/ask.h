// Ask mode (vigil.network.ask): a request to a host off the allow list is held while
// someone is asked, instead of being refused at once. The proxy only holds and waits; who
// is asked, and how an answer is remembered, is the Asker's business (the supervisor's
// agent session asks its JSON-RPC client or a terminal).
//
// Only a plain "not on the allow list" is asked: a deniedDomains match, a malformed host
// and every address-guard refusal (loopback, metadata, private) are refused as before,
// never asked (the proxy resolves and guards BEFORE asking, and connects to exactly the
// addresses that were guarded). A hold ends with the first answer; without one, after
// ServerOptions::ask_timeout, in a deny.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "proxy/events.h"

namespace vigil::proxy {

// kTimeout: nobody answered in time; kCancelled: the connection or the proxy ended first.
enum class AskAnswer { kOnce, kSession, kAlways, kDeny, kTimeout, kCancelled };
const char* to_string(AskAnswer a);  // "once" | "session" | "always" | "deny" | ...
// What a person may answer: "once", "session", "always", "deny" (nothing else).
std::optional<AskAnswer> parse_ask_answer(std::string_view text);
inline bool allows(AskAnswer a) {
  return a == AskAnswer::kOnce || a == AskAnswer::kSession || a == AskAnswer::kAlways;
}

struct AskQuestion {
  NetProto proto = NetProto::kHttp;
  std::string host;  // canonical
  std::uint16_t port = 0;
  std::string address;  // the first resolved address that passed the guard
  std::chrono::milliseconds timeout{0};
  // "host:port", IPv6 in brackets: the allowedDomains entry "session"/"always" add.
  std::string entry() const;
};

// One held request. Answered once, from any thread: the first answer wins.
class AskTicket {
 public:
  // `wake` is called (under the ticket's lock, so it must only post) when the answer is
  // in; the proxy disarms it with detach() when the hold ends.
  AskTicket(AskQuestion q, std::function<void()> wake) : q_(std::move(q)), wake_(std::move(wake)) {}
  const AskQuestion& question() const { return q_; }
  // Runs once the answer is claimed and before it is visible to the proxy, so that what
  // it records comes before the decision the proxy then logs. Set before the ticket is
  // handed out.
  void on_answer(std::function<void(AskAnswer)> f) { on_answer_ = std::move(f); }
  // False when another answer came first. `settle`, when given, carries the answer out
  // (and may turn it into kDeny when it cannot be) in place of on_answer.
  bool answer(AskAnswer a, const std::function<AskAnswer(AskAnswer)>& settle = {});
  std::optional<AskAnswer> result() const;
  void detach();

 private:
  const AskQuestion q_;
  std::function<void(AskAnswer)> on_answer_;
  mutable std::mutex mu_;
  std::function<void()> wake_;
  bool claimed_ = false;
  std::optional<AskAnswer> result_;
};

class Asker {
 public:
  virtual ~Asker() = default;
  // Called on the proxy's thread: must not block. Answers the ticket later, or now.
  virtual void ask(const std::shared_ptr<AskTicket>& ticket) = 0;
};

}  // namespace vigil::proxy
