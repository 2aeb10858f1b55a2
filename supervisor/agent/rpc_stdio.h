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
#include <optional>
#include <string>
#include <variant>

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
// The answer to params a method cannot take: -32602 with what was wrong.
inline RpcError bad_params(const std::string& why) { return {kInvalidParams, why}; }
// A request that is answered by nothing (MCP: a request the client cancelled).
struct NoReply {};
using Reply = std::variant<nlohmann::json, RpcError, NoReply>;

// `id` is the request's (null for a notification): notifications a method sends about
// its request name it, so a client can tell concurrent requests' streams apart.
using Method =
    std::function<Reply(const nlohmann::json& params, Out& out, const nlohmann::json& id)>;

struct ServeHooks {
  // A reply of the client to a request the server sent (`ask`: an object with "id" and
  // "result" or "error", no "method"), on the reading thread.
  std::function<void(const nlohmann::json& reply)> on_response;
  // On the reading thread, in the order the messages came, before a request or
  // notification is dispatched (`id` null for a notification): an error answers it
  // instead (a notification's is dropped). MCP's "initialize first" lives here, and the
  // registration of a command a cancel may name right after it.
  std::function<std::optional<RpcError>(const std::string& method, const nlohmann::json& params,
                                        const nlohmann::json& id, bool has_id)>
      admit;
  // stdin ended (the client closed it, or went away): before the requests in flight are
  // waited for.
  std::function<void()> on_eof;
};

// Reads requests from `in_fd` until EOF and answers them on `out`. Notifications (no id)
// to a method that does not exist are ignored, as JSON-RPC says.
void serve(int in_fd, Out& out, const std::map<std::string, Method>& methods,
           const ServeHooks& hooks = {});

// The id of a request line that is not valid JSON, when it can be told for sure: a line
// that parses once each lone UTF-16 surrogate escape (\ud800, which names no character)
// is replaced, or whose very end is `"id":N}` / `"id":"S"}` (the SDKs put the id last).
// None: the parse error goes to id null, as JSON-RPC says.
std::optional<nlohmann::json> recover_request_id(std::string_view head, std::string_view tail);

}  // namespace vigil::rpc
