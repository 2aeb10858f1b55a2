// JSON parsing for settings files that remembers where every value was, so that a wrong
// type three levels down can be reported as "line 7, column 18" and not just "invalid".
// Strict where nlohmann is lenient: duplicate keys are an error (with last-one-wins a
// second "allowWrite" would silently replace the first), nesting and size are bounded.
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "supervisor/core/base/bounded_json.h"  // json_path_key, json_path_index
#include "supervisor/core/base/result.h"

namespace vigil {

struct SettingsJson {
  nlohmann::json root;
  // JSON path ("filesystem.denyRead[2]", "network.deniedDomainReasons[\"a.com\"]") -> byte
  // offset just past the value's first token.
  std::map<std::string, std::size_t> offsets;
  std::string text;
};

inline constexpr std::size_t kMaxSettingsBytes = 1 << 20;
inline constexpr int kMaxSettingsDepth = 32;

// `source` names the file in error messages. Errors are Errc::kInvalidPolicy with
// "<source>: line L, column C: <what>".
Result<SettingsJson> parse_settings_json(std::string text, std::string_view source);

// "line L, column C" for a byte offset of `text` (1-based, counting bytes).
std::string line_column(std::string_view text, std::size_t offset);

}  // namespace vigil
