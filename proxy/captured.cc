#include "proxy/captured.h"

#include <cstddef>

namespace vigil::proxy {

void mark_captured(const http::RequestHead& head, NetDecision* d) {
  constexpr std::size_t kMaxProgram = 200;
  d->captured = true;
  for (const auto& h : head.headers) {
    if (!http::iequals(h.name, kCapturedProgramHeader)) continue;
    d->program = h.value.substr(0, kMaxProgram);
    break;
  }
}

}  // namespace vigil::proxy
