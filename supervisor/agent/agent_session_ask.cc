// Ask mode of an agent session (vigil.network.ask; proxy/ask.h): a request to a host off
// the allow list is held by the command's proxy, the session's client is asked, and the
// answer is carried out here: "session" and "always" allow the host:port for the rest of
// the session (the commands running now, through ask_allowed_, and those that start
// later, through the session's allowedDomains), "always" also writes the entry into the
// settings file the session started with, and only that file. Every question and every
// answer is a record of the command that asked (net.ask, net.ask.answer).
#include <algorithm>

#include "supervisor/agent/agent_session.h"
#include "supervisor/command/net_events.h"
#include "supervisor/agent/settings_edit.h"

namespace vigil {

using proxy::AskAnswer;

void AgentSession::ask(std::uint64_t command, const std::shared_ptr<proxy::AskTicket>& ticket) {
  const proxy::AskQuestion& q = ticket->question();
  const std::string entry = q.entry();
  std::uint64_t n = 0;
  {
    std::lock_guard lock(mu_);
    // Already answered "session" / "always" while this command ran: no second question
    // (the decision it logs says rule ask:session).
    if (ask_allowed_.count(entry) != 0) {
      ticket->answer(AskAnswer::kSession);
      return;
    }
    n = next_ask_++;
  }
  (void)log_->append(events::Source::kProxy, net_event(q, n), command);
  // The proxy ends a hold without the client (timeout, the request or the session ended).
  ticket->on_answer(
      [this, command, n, entry](AskAnswer a) { (void)settle(command, n, entry, a, ""); });
  AskPrompt prompt;
  prompt.ask = n;
  prompt.command = command;
  prompt.proto = events::to_string(q.proto);
  prompt.host = q.host;
  prompt.port = q.port;
  prompt.address = q.address;
  prompt.entry = entry;
  prompt.timeout_s = static_cast<double>(q.timeout.count()) / 1000.0;
  prompt.can_always = options_.settings.has_value();
  options_.ask_client(prompt, [this, ticket, command, n, entry](std::string_view text) {
    const auto parsed = proxy::parse_ask_answer(text);
    std::string error;
    if (!parsed) {
      error = "not an answer: \"" + std::string(text.substr(0, 200)) +
              "\" (expected once, session, always or deny)";
    }
    return ticket->answer(parsed.value_or(AskAnswer::kDeny),
                          [&](AskAnswer a) {
                            return settle(command, n, entry, a, error, options_.ask_via);
                          });
  });
}

AskAnswer AgentSession::settle(std::uint64_t command, std::uint64_t ask, const std::string& entry,
                               AskAnswer answer, std::string error, std::string via) {
  events::NetAskAnswer rec;
  rec.ask = ask;
  rec.via = std::move(via);
  if (answer == AskAnswer::kAlways) {
    std::lock_guard lock(settings_mu_);
    if (!options_.settings) {
      error =
          "always: this session has no settings file to write the entry into (start it "
          "with --settings FILE); denied";
    } else if (auto r = add_allowed_domain_to_file(*options_.settings, entry); !r) {
      error = "always: " + r.error().message + "; denied";
    } else {
      rec.written = *options_.settings;
    }
    if (!error.empty()) answer = AskAnswer::kDeny;
  }
  if (answer == AskAnswer::kSession || answer == AskAnswer::kAlways) {
    rec.entry = entry;
    std::lock_guard lock(mu_);
    ask_allowed_.insert(entry);
    auto& allowed = net_.allowed_domains;
    if (std::find(allowed.begin(), allowed.end(), entry) == allowed.end()) allowed.push_back(entry);
  }
  rec.answer = proxy::to_string(answer);
  rec.error = std::move(error);
  // A session ending under a held request: its log may be closed already.
  if (log_) (void)log_->append(events::Source::kSupervisor, std::move(rec), command);
  return answer;
}

}  // namespace vigil
