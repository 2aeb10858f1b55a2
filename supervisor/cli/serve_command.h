// `vigil serve` (JSON-RPC 2.0 on stdio) and `vigil mcp` (an MCP stdio server with one
// tool, run_command): an agent session for clients in any language. docs/protocol.md.
#pragma once

#include "supervisor/agent/agent_session.h"

namespace vigil {

int cmd_serve(const SessionArgs& args, bool mcp);

}  // namespace vigil
