#include "supervisor/agent/wire_json.h"

#include "supervisor/core/base/bounded_json.h"
#include "supervisor/core/events/event_schema.h"

namespace vigil {

Result<nlohmann::json> parse_json_object(std::string_view text, int max_depth) {
  BoundedJsonBuilder dom(max_depth);
  bool ok = false;
  try {
    ok = sax_parse_json_text(text.begin(), text.end(), &dom);
  } catch (const std::exception&) {
    ok = false;  // an allocation failure: a value, not a crash
  }
  if (!ok) return make_error(Errc::kInvalidPolicy, "not valid JSON (or nested too deeply)");
  if (!dom.root().is_object()) return make_error(Errc::kInvalidPolicy, "not a JSON object");
  return std::move(dom.root());
}

nlohmann::json json_bytes(const std::string& bytes) {
  if (events::is_valid_utf8(bytes)) return bytes;
  return nlohmann::json{{"b64", events::base64_encode(bytes)}};
}

Result<std::string> json_bytes_value(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.size() == 1 && v.contains("b64") && v["b64"].is_string()) {
    auto d = events::base64_decode(v["b64"].get<std::string>());
    if (d) return std::move(*d);
  }
  return make_error(Errc::kInvalidPolicy, "expected a string or {\"b64\": \"...\"}");
}

}  // namespace vigil
