#include "filters/sandbox_program.h"

#include "filters/bpf_compile.h"
#include "filters/filter_specs.h"
#include "filters/notify_filter.h"

namespace vigil {

Result<std::vector<sock_filter>> sandbox_program(bool observe, bool reads) {
  std::vector<const FilterSpec*> specs(worker_filters().begin(), worker_filters().end());
  if (observe) specs.push_back(&notify_filter(reads));
  return compile_combined(specs);
}

}  // namespace vigil
