#include "supervisor/core/events/net.h"

namespace vigil::events {

const char* to_string(NetProto p) {
  switch (p) {
    case NetProto::kHttp:
      return "http";
    case NetProto::kConnect:
      return "connect";
    case NetProto::kSocks5:
      return "socks5";
    case NetProto::kSocks4:
      return "socks4";
  }
  return "?";
}

const char* to_string(NetVerdict v) { return v == NetVerdict::kAllowed ? "allowed" : "denied"; }

}  // namespace vigil::events
