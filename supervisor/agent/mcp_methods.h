// `vigil mcp`: an MCP server (stdio) with run_command and the background commands' tools
// (mcp_background.h), over an agent session
// (docs/protocol.md). Version negotiation as the MCP spec says (a version the client asks
// for that this server speaks is echoed; any other gets the latest this server speaks),
// nothing but initialize and ping before initialize, structured results with an
// outputSchema, tool annotations, cancellation (notifications/cancelled, and the client
// closing stdin) through command_stop.h.
#pragma once

#include <array>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "supervisor/agent/agent_session.h"
#include "supervisor/agent/background.h"
#include "supervisor/agent/command_stop.h"
#include "supervisor/agent/rpc_run.h"
#include "supervisor/agent/rpc_stdio.h"

namespace vigil {

// Newest first: what `initialize` answers with when the client's version is not one of
// these. 2025-06-18 brought structuredContent and outputSchema, 2025-03-26 annotations:
// a client that negotiated an older version is not sent them.
inline constexpr std::array<std::string_view, 4> kMcpVersions = {"2025-11-25", "2025-06-18",
                                                                 "2025-03-26", "2024-11-05"};
std::string negotiate_mcp_version(std::string_view requested);

// run_command's description for tools/list, for the version negotiated.
nlohmann::json mcp_tool(std::string_view version, const std::string& workspace);
// A finished command as run_command's result (content, isError, structuredContent).
nlohmann::json mcp_tool_result(const Ran& ran, std::string_view version, const std::string& log);
// The violations JSON (docs/annotation.md) as one list of objects, each with its `status`
// (quarantined, unguarded, denied).
nlohmann::json violations_list(const nlohmann::json& violations);

class McpServer {
 public:
  explicit McpServer(AgentSession& session) : session_(session), background_(session) {}
  std::map<std::string, rpc::Method> methods();
  rpc::ServeHooks hooks();

 private:
  std::optional<rpc::RpcError> admit(const std::string& method, const nlohmann::json& params,
                                     const nlohmann::json& id, bool has_id);
  rpc::Reply call(const nlohmann::json& params, rpc::Out& out, const nlohmann::json& id);
  std::string version();

  // run_command's and start_command's arguments as a run: a message for the model when
  // they are wrong.
  std::variant<RunParams, std::string> tool_run(const std::string& tool, const nlohmann::json& args);

  AgentSession& session_;
  RunningCommands running_;
  BackgroundCommands background_;
  std::mutex mu_;
  std::optional<std::string> version_;  // set by initialize
};

}  // namespace vigil
