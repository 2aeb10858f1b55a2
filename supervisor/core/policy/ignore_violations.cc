#include "supervisor/core/policy/ignore_violations.h"

#include <nlohmann/json.hpp>

namespace vigil {

std::string ignore_command_line(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

std::string ignored_by(const std::vector<IgnoreRule>& rules, std::string_view command,
                       std::string_view target) {
  for (const auto& r : rules) {
    if (r.command != "*" && command.find(r.command) == std::string_view::npos) continue;
    for (const auto& p : r.paths) {
      if (target.find(p) == std::string_view::npos) continue;
      // JSON-quoted: the entry is the user's text, and this lands in the log as one field.
      return "ignoreViolations[" + nlohmann::json(r.command).dump() +
             "]: " + nlohmann::json(p).dump();
    }
  }
  return {};
}

}  // namespace vigil
