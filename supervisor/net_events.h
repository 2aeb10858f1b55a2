// The proxy's decisions and upstream failures as session-log events (schema v1), for
// `vigil run` on both platforms. Pure; thread-safe.
#pragma once

#include "proxy/events.h"
#include "supervisor/event_schema.h"

namespace vigil {

events::NetDecision net_event(const proxy::NetDecision& d);
events::NetUpstreamFailure net_event(const proxy::UpstreamFailure& f);

}  // namespace vigil
