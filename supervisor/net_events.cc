#include "supervisor/net_events.h"

namespace vigil {

namespace {

events::NetProto to_event_proto(proxy::Proto p) {
  switch (p) {
    case proxy::Proto::kHttp:
      return events::NetProto::kHttp;
    case proxy::Proto::kConnect:
      return events::NetProto::kConnect;
    case proxy::Proto::kSocks5:
      return events::NetProto::kSocks5;
    case proxy::Proto::kSocks4:
      return events::NetProto::kSocks4;
  }
  return events::NetProto::kHttp;
}

}  // namespace

events::NetDecision net_event(const proxy::NetDecision& d) {
  events::NetDecision e;
  e.proto = to_event_proto(d.proto);
  e.host = d.host;
  e.port = d.port;
  e.verdict = d.verdict == proxy::Verdict::kAllow ? events::NetVerdict::kAllowed
                                                  : events::NetVerdict::kDenied;
  e.rule = d.rule;
  e.reason = d.reason;
  e.refused_by = proxy::to_string(d.refused_by);
  e.address = d.address;
  e.guard_check = d.guard_check;
  return e;
}

events::NetUpstreamFailure net_event(const proxy::UpstreamFailure& f) {
  events::NetUpstreamFailure e;
  e.proto = to_event_proto(f.proto);
  e.host = f.host;
  e.port = f.port;
  e.address = f.address;
  e.what = f.what;
  return e;
}

events::NetAsk net_event(const proxy::AskQuestion& q, std::uint64_t ask) {
  events::NetAsk e;
  e.ask = ask;
  e.proto = to_event_proto(q.proto);
  e.host = q.host;
  e.port = q.port;
  e.address = q.address;
  e.timeout_ms = static_cast<std::uint64_t>(q.timeout.count());
  return e;
}

}  // namespace vigil
