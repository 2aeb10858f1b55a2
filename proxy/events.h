// What the proxy tells the supervisor: one net.decision per request (allowed or not),
// and a net.upstream_failure when an allowed connection could not be made. The events
// are the schema's own model (supervisor/core/events/net.h): the proxy fills them in and
// hands them over as they are. The proxy never writes to the sandboxed command's
// terminal; the supervisor turns these into session-log records and the
// <sandbox_violations> block (and `vigil proxy` into schema v1 lines).
#pragma once

#include "supervisor/core/events/net.h"

namespace vigil::proxy {

using events::NetDecision;
using events::NetProto;
using events::NetUpstreamFailure;
using events::NetVerdict;
namespace refused_by = events::refused_by;

// Where events go. Called on the proxy's io_context thread, once per event, in order;
// implementations must not block for long (they hold up every connection).
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void on_decision(const NetDecision& d) = 0;
  virtual void on_upstream_failure(const NetUpstreamFailure&) {}
};

}  // namespace vigil::proxy
