#include "supervisor/command/net_events.h"

#include <string>

#include "supervisor/core/policy/ignore_violations.h"
#include "supervisor/report/policy_judge.h"

namespace vigil {

events::NetDecision recorded_decision(const events::NetDecision& d, const Policy& policy,
                                      std::string_view command) {
  events::NetDecision e = d;
  e.rule_id = record_rule_id(policy.net, e);
  if (e.verdict == events::NetVerdict::kDenied) {
    e.ignored =
        ignored_by(policy.ignore_violations, command, e.host + ":" + std::to_string(e.port));
  }
  return e;
}

events::NetAsk net_event(const proxy::AskQuestion& q, std::uint64_t ask) {
  events::NetAsk e;
  e.ask = ask;
  e.proto = q.proto;
  e.host = q.host;
  e.port = q.port;
  e.address = q.address;
  e.timeout_ms = static_cast<std::uint64_t>(q.timeout.count());
  return e;
}

}  // namespace vigil
