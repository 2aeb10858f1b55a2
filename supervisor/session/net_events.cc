#include "supervisor/session/net_events.h"

namespace vigil {

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
