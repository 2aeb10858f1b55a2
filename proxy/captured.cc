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

bool refuse_datagram(const http::RequestHead& head, NetDecision* d) {
  bool datagram = false;
  for (const auto& h : head.headers) datagram = datagram || http::iequals(h.name, kCapturedDatagramHeader);
  if (!datagram) return false;
  d->verdict = NetVerdict::kDenied;
  d->refused_by = std::string(kRefusedDatagram);
  d->rule.clear();
  d->address.clear();
  d->guard_check.clear();
  d->reason = "UDP is not carried outside the sandbox (only TCP goes through the proxy, and DNS "
              "is answered inside): the datagram was dropped and the socket refuses the rest; "
              "use TCP (QUIC clients fall back to it)";
  return true;
}

}  // namespace vigil::proxy
