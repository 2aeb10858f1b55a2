#include "seatbelt/sbpl_text.h"

namespace vigil {

Result<std::string> sbpl_string(std::string_view fixed) {
  std::string out = "\"";
  for (char c : fixed) {
    if (c < 0x20 || c >= 0x7f) {
      return make_error(Errc::kInternal, "sbpl_string: control or non-ASCII byte in a fixed token");
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace vigil
