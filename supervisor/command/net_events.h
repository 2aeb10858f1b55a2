// The proxy's side of a session's record (schema v1), on every platform: a decision as
// the session logs it (its rule id, and whether ignoreViolations covers a denial), and
// ask mode's question about a held request (proxy/ask.h). Upstream failures need no step:
// they are the schema's own model (supervisor/core/events/net.h). Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

#include "proxy/ask.h"
#include "supervisor/core/events/event_schema.h"
#include "supervisor/core/policy/policy.h"

namespace vigil {

// `d` as the session records it under `policy`: the rule id of its verdict
// (policy_judge.h), and for a denial the ignoreViolations rule that matches `host:port`
// for `command` (ignore_command_line()), if any.
events::NetDecision recorded_decision(const events::NetDecision& d, const Policy& policy,
                                      std::string_view command);

// The question about a held request, as the session's `ask`-th.
events::NetAsk net_event(const proxy::AskQuestion& q, std::uint64_t ask);

}  // namespace vigil
