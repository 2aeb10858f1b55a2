// `vigil mcp`'s resources: the session's log and its replay views, for a client to read
// (resources/list, resources/templates/list, resources/read). A view is `vigil replay`'s
// own output for the session's log, made by running this very binary (/proc/self/exe
// replay ...) with the view's fixed flags: nothing of the URI reaches its argv but a
// command number, parsed as one.
//
//   vigil://session/log                   the log itself (JSON lines)
//   vigil://session/VIEW                  VIEW: timeline, violations, writes, network,
//                                         changes, diff
//   vigil://session/commands/N/VIEW       the same, for the session's command N only
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "supervisor/core/base/result.h"

namespace vigil {

// What a resource URI names: the log itself, or replay's flags for a view.
struct McpResource {
  bool raw_log = false;
  std::vector<std::string> replay_flags;  // e.g. {"--changes", "--command", "3"}
};
// Pure: none for a URI that names no resource of this server.
std::optional<McpResource> mcp_resource_of(std::string_view uri);

// resources/list's and resources/templates/list's entries.
nlohmann::json mcp_resource_list();
nlohmann::json mcp_resource_templates();

// The text of resource `uri` of the session whose log is `log` (at most kMaxResourceBytes:
// past that, cut, with a line saying so and naming the log); an error names what is wrong.
inline constexpr std::size_t kMaxResourceBytes = 8u << 20;
Result<std::string> read_mcp_resource(std::string_view uri, const std::string& log);

}  // namespace vigil
