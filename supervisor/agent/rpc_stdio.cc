#include "supervisor/agent/rpc_stdio.h"

#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <thread>

#include "supervisor/agent/wire_json.h"

namespace vigil::rpc {

using json = nlohmann::json;

// A request line may carry a command's stdin: bounded, but generously.
constexpr std::size_t kMaxLine = 16u << 20;

namespace {

json error_reply(const json& id, int code, const std::string& message) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

}  // namespace

void serve(int in_fd, Out& out, const std::map<std::string, Method>& methods,
           const std::function<void(const json& reply)>& on_response) {
  std::mutex mu;
  std::condition_variable idle;
  std::size_t active = 0;
  auto handle = [&](const std::string& line) {
    auto parsed = parse_json_object(line, 16);
    if (!parsed) {
      out.post(error_reply(nullptr, kParseError, parsed.error().message));
      return;
    }
    json req = std::move(*parsed);
    const bool has_id = req.contains("id");
    const json id = has_id ? req["id"] : json();
    if (has_id && !req.contains("method") && (req.contains("result") || req.contains("error"))) {
      if (on_response) on_response(req);
      return;
    }
    // Compared, never converted: a "jsonrpc" of another type is not a request, not a throw.
    const auto version = req.find("jsonrpc");
    if (version == req.end() || *version != "2.0" || !req.contains("method") ||
        !req["method"].is_string()) {
      if (has_id) out.post(error_reply(id, kInvalidRequest, "not a JSON-RPC 2.0 request"));
      return;
    }
    const std::string method = req["method"];
    auto it = methods.find(method);
    if (it == methods.end()) {
      if (has_id) out.post(error_reply(id, kMethodNotFound, "no method " + method));
      return;
    }
    const json params = req.contains("params") ? req["params"] : json::object();
    {
      std::lock_guard lock(mu);
      ++active;
    }
    std::thread([&, id, has_id, params, fn = it->second] {
      // A parameter of an unexpected JSON type (a method reading it with json's typed
      // accessors) is the caller's mistake: an invalid-params reply, never a crash.
      std::variant<json, RpcError> result;
      try {
        result = fn(params, out, id);
      } catch (const json::exception& e) {
        result = RpcError{kInvalidParams, std::string("params of an unexpected type: ") + e.what()};
      }
      if (has_id) {
        if (auto* r = std::get_if<json>(&result)) {
          out.send(json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(*r)}});
        } else {
          const auto& e = std::get<RpcError>(result);
          out.send(error_reply(id, e.code, e.message));
        }
      }
      std::lock_guard lock(mu);
      --active;
      idle.notify_all();
    }).detach();
  };
  std::string buf;
  bool skipping = false;  // inside a line longer than kMaxLine
  char chunk[65536];
  for (;;) {
    const ssize_t n = ::read(in_fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    buf.append(chunk, static_cast<std::size_t>(n));
    std::size_t start = 0, nl;
    while ((nl = buf.find('\n', start)) != std::string::npos) {
      if (!skipping && nl > start) handle(buf.substr(start, nl - start));
      if (skipping) out.post(error_reply(nullptr, kInvalidRequest, "request line too long"));
      skipping = false;
      start = nl + 1;
    }
    buf.erase(0, start);
    if (buf.size() > kMaxLine) {
      buf.clear();
      skipping = true;
    }
  }
  std::unique_lock lock(mu);
  idle.wait(lock, [&] { return active == 0; });
}

}  // namespace vigil::rpc
