#include "filters/sandbox_program.h"

#include "filters/bpf_compile.h"
#include "filters/filter_specs.h"
#include "filters/notify_filter.h"

namespace vigil {

Result<std::vector<sock_filter>> sandbox_program(bool observe, UnixSockets unix, bool reads,
                                                 bool capture) {
  // The broker's trap needs vigil-init's listener: without the observer a connect() would
  // find nobody to answer it (the kernel fails it with ENOSYS), so refuse the combination.
  if (unix == UnixSockets::kBrokered && !observe)
    return make_error(Errc::kUnsupported,
                      "unix sockets are brokered by vigil-init's observer, which is off");
  if (capture && !observe)
    return make_error(Errc::kUnsupported,
                      "connections are captured by vigil-init's observer, which is off");
  const auto workers = worker_filters(unix);
  std::vector<const FilterSpec*> specs(workers.begin(), workers.end());
  // The broker's table traps connect() already: one trap serves both.
  if (capture && unix != UnixSockets::kBrokered) specs.push_back(&net_capture_filter());
  if (observe) specs.push_back(&notify_filter(reads));
  return compile_combined(specs);
}

}  // namespace vigil
