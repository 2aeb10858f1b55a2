#include "proxy/ask.h"

namespace vigil::proxy {

const char* to_string(AskAnswer a) {
  switch (a) {
    case AskAnswer::kOnce:
      return "once";
    case AskAnswer::kSession:
      return "session";
    case AskAnswer::kAlways:
      return "always";
    case AskAnswer::kDeny:
      return "deny";
    case AskAnswer::kTimeout:
      return "timeout";
    case AskAnswer::kCancelled:
      return "cancelled";
  }
  return "deny";
}

std::optional<AskAnswer> parse_ask_answer(std::string_view text) {
  for (const AskAnswer a :
       {AskAnswer::kOnce, AskAnswer::kSession, AskAnswer::kAlways, AskAnswer::kDeny}) {
    if (text == to_string(a)) return a;
  }
  return std::nullopt;
}

std::string AskQuestion::entry() const {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

bool AskTicket::answer(AskAnswer a, const std::function<AskAnswer(AskAnswer)>& settle) {
  {
    std::lock_guard lock(mu_);
    if (claimed_) return false;
    claimed_ = true;
  }
  if (settle) {
    a = settle(a);
  } else if (on_answer_) {
    on_answer_(a);
  }
  std::lock_guard lock(mu_);
  result_ = a;
  if (wake_) wake_();
  return true;
}

std::optional<AskAnswer> AskTicket::result() const {
  std::lock_guard lock(mu_);
  return result_;
}

void AskTicket::detach() {
  std::lock_guard lock(mu_);
  wake_ = nullptr;
}

}  // namespace vigil::proxy
