// `vigil proxy`'s event stream (stderr or --events FILE): every decision and upstream
// failure as one schema v1 record (docs/events.md), each line exactly what
// events::serialize() writes, so the supervisor's own reader (parse_log_record) accepts
// it. The envelope: a session id made for this run of the proxy, seq from 0, t in ns since
// the proxy started, src "proxy", and prev chaining each line to the one before (64
// zeros for the first), as in a session log. Lines written before this (`"verdict":
// "allow"/"deny"`, no session or prev) are not records; nothing reads them back.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

#include "proxy/events.h"
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/core/events/event_schema.h"

namespace vigil {

class ProxyEventLines : public proxy::EventSink {
 public:
  // `session` must be a schema session id (new_session_id()).
  ProxyEventLines(UniqueFd fd, std::string session);
  void on_decision(const events::NetDecision& d) override;
  void on_upstream_failure(const events::NetUpstreamFailure& f) override;

 private:
  void write(events::Body body);

  std::mutex mu_;  // one line at a time, whole
  UniqueFd fd_;
  std::string session_;
  std::uint64_t seq_ = 0;
  std::string prev_{events::kGenesisPrev};
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace vigil
