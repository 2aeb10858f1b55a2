// The proxy's decisions and upstream failures as session-log events (schema v1), for
// `vigil run` on both platforms. Pure; thread-safe.
#pragma once

#include "proxy/ask.h"
#include "proxy/events.h"
#include "supervisor/event_schema.h"

namespace vigil {

events::NetDecision net_event(const proxy::NetDecision& d);
events::NetUpstreamFailure net_event(const proxy::UpstreamFailure& f);
// Ask mode: the question about a held request, as the session's `ask`-th.
events::NetAsk net_event(const proxy::AskQuestion& q, std::uint64_t ask);

}  // namespace vigil
