// Ask mode's question about a held request (proxy/ask.h) as a session-log event (schema
// v1). The proxy's decisions and upstream failures need no such step: they are the
// schema's own model (supervisor/core/events/net.h). Pure; thread-safe.
#pragma once

#include <cstdint>

#include "proxy/ask.h"
#include "supervisor/core/events/event_schema.h"

namespace vigil {

// The question about a held request, as the session's `ask`-th.
events::NetAsk net_event(const proxy::AskQuestion& q, std::uint64_t ask);

}  // namespace vigil
