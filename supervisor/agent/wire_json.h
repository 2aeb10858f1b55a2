// JSON helpers shared by vigil's two protocols (the session socket, JSON-RPC on stdio):
// a bounded parse of one object, and byte strings that need not be UTF-8 ({"b64": ...}
// for one that is not, as in the session log).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "supervisor/core/base/result.h"

namespace vigil {

// One JSON object, nesting bounded, duplicate keys refused.
Result<nlohmann::json> parse_json_object(std::string_view text, int max_depth = 8);

nlohmann::json json_bytes(const std::string& bytes);
Result<std::string> json_bytes_value(const nlohmann::json& v);

}  // namespace vigil
