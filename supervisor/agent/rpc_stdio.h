// JSON-RPC 2.0 over stdio for `vigil serve` and `vigil mcp` (docs/protocol.md).
//
// Framing: one JSON object per line (newline-delimited), both ways, as MCP's stdio
// transport does; JSON never needs a raw newline inside a message, and a line-based
// client is a few lines in any language (LSP's Content-Length headers buy nothing here).
//
// Requests are dispatched each on its own thread (a long `run` never blocks another
// request); every line to stdout goes through one writer (supervisor/agent/rpc_out.h), so
// replies and notifications of concurrent requests never interleave. EOF on stdin ends the loop once
// the requests in flight have answered.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "supervisor/core/base/result.h"
#include "supervisor/agent/rpc_out.h"

namespace vigil::rpc {

inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kServerError = -32000;  // the method failed (message says why)

struct RpcError {
  int code;
  std::string message;
};

// `id` is the request's (null for a notification): notifications a method sends about
// its request name it, so a client can tell concurrent requests' streams apart.
using Method = std::function<std::variant<nlohmann::json, RpcError>(
    const nlohmann::json& params, Out& out, const nlohmann::json& id)>;

// Reads requests from `in_fd` until EOF and answers them on `out`. Notifications (no id)
// to a method that does not exist are ignored, as JSON-RPC says.
// A reply of the client to a request the server sent (`ask`: an object with "id" and
// "result" or "error", no "method") goes to `on_response`, on the reading thread.
void serve(int in_fd, Out& out, const std::map<std::string, Method>& methods,
           const std::function<void(const nlohmann::json& reply)>& on_response = {});

}  // namespace vigil::rpc
