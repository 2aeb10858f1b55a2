#include "supervisor/agent/rpc_stdio.h"

#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <regex>
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

int hex_value(std::string_view s) {
  int v = 0;
  for (char c : s) {
    const int d = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                         : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

// `text` with every lone surrogate escape replaced by \ufffd (pairs kept).
std::string without_lone_surrogates(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 >= text.size()) {
      out += text[i];
      continue;
    }
    const int v = text[i + 1] == 'u' && i + 6 <= text.size() ? hex_value(text.substr(i + 2, 4)) : -1;
    if (v < 0xD800 || v > 0xDFFF) {  // not a surrogate (or no \u escape): kept as it is
      out.append(text.substr(i, 2));
      ++i;
      continue;
    }
    const int low = v <= 0xDBFF && i + 12 <= text.size() && text[i + 6] == '\\' &&
                            text[i + 7] == 'u'
                        ? hex_value(text.substr(i + 8, 4))
                        : -1;
    if (low >= 0xDC00 && low <= 0xDFFF) {
      out.append(text.substr(i, 12));
      i += 11;
    } else {
      out += "\\ufffd";
      i += 5;
    }
  }
  return out;
}

}  // namespace

namespace {

// The answer to a line past kMaxLine, of which `head` and `tail` were kept.
json too_long_reply(const std::string& head, const std::string& tail) {
  const auto id = recover_request_id(head, tail);
  return error_reply(id ? *id : json(), kInvalidRequest,
                     "request line too long (at most " + std::to_string(kMaxLine >> 20) +
                         " MiB): send large input as a file in the workspace");
}

}  // namespace

std::optional<json> recover_request_id(std::string_view head, std::string_view tail) {
  if (tail.empty()) {
    auto fixed = parse_json_object(without_lone_surrogates(head), 16);
    if (fixed && fixed->contains("id") &&
        ((*fixed)["id"].is_number_integer() || (*fixed)["id"].is_string())) {
      return (*fixed)["id"];
    }
    tail = head.size() > 4096 ? head.substr(head.size() - 4096) : head;
  }
  // The top-level object's last member: `"id":` then a number or a plain string, then the
  // one closing brace (a nested "id" would be followed by two).
  static const std::regex kLastId(R"re("id"\s*:\s*(-?[0-9]{1,18}|"[^"\\]{0,256}")\s*\}\s*$)re");
  std::match_results<std::string_view::const_iterator> m;
  if (std::regex_search(tail.begin(), tail.end(), m, kLastId)) {
    auto v = json::parse(m[1].str(), nullptr, false);
    if (!v.is_discarded()) return v;
  }
  return std::nullopt;
}

void serve(int in_fd, Out& out, const std::map<std::string, Method>& methods,
           const ServeHooks& hooks) {
  std::mutex mu;
  std::condition_variable idle;
  std::size_t active = 0;
  auto handle = [&](const std::string& line) {
    auto parsed = parse_json_object(line, 16);
    if (!parsed) {
      // A request the client waits for gets its answer, when its id can be told.
      const auto id = recover_request_id(line, {});
      out.post(error_reply(id ? *id : json(), id ? kInvalidParams : kParseError,
                           id ? parsed.error().message +
                                    " (a string escape \\ud800 to \\udfff without its pair "
                                    "names no character)"
                              : parsed.error().message));
      return;
    }
    json req = std::move(*parsed);
    const bool has_id = req.contains("id");
    const json id = has_id ? req["id"] : json();
    if (has_id && !req.contains("method") && (req.contains("result") || req.contains("error"))) {
      if (hooks.on_response) hooks.on_response(req);
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
    const json params = req.contains("params") ? req["params"] : json::object();
    if (hooks.admit) {
      if (auto refused = hooks.admit(method, params, id, has_id)) {
        if (has_id) out.post(error_reply(id, refused->code, refused->message));
        return;
      }
    }
    auto it = methods.find(method);
    if (it == methods.end()) {
      if (has_id) out.post(error_reply(id, kMethodNotFound, "no method " + method));
      return;
    }
    {
      std::lock_guard lock(mu);
      ++active;
    }
    std::thread([&, id, has_id, params, fn = it->second] {
      // A parameter of an unexpected JSON type (a method reading it with json's typed
      // accessors) is the caller's mistake: an invalid-params reply, never a crash.
      Reply result;
      try {
        result = fn(params, out, id);
      } catch (const json::exception& e) {
        result = RpcError{kInvalidParams, std::string("params of an unexpected type: ") + e.what()};
      }
      if (has_id) {
        if (auto* r = std::get_if<json>(&result)) {
          out.send(json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(*r)}});
        } else if (auto* e = std::get_if<RpcError>(&result)) {
          out.send(error_reply(id, e->code, e->message));
        }
      }
      std::lock_guard lock(mu);
      --active;
      idle.notify_all();
    }).detach();
  };
  std::string buf;
  bool skipping = false;  // inside a line longer than kMaxLine
  std::string skipped_head, skipped_tail;  // of that line: where its id may be told
  char chunk[65536];
  for (;;) {
    const ssize_t n = ::read(in_fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    buf.append(chunk, static_cast<std::size_t>(n));
    std::size_t start = 0, nl;
    while ((nl = buf.find('\n', start)) != std::string::npos) {
      if (!skipping && nl > start) handle(buf.substr(start, nl - start));
      if (skipping) {
        skipped_tail += buf.substr(start, nl - start);
        if (skipped_tail.size() > 4096) skipped_tail.erase(0, skipped_tail.size() - 4096);
        out.post(too_long_reply(skipped_head, skipped_tail));
      }
      skipping = false;
      start = nl + 1;
    }
    buf.erase(0, start);
    if (buf.size() > kMaxLine) {
      if (!skipping) skipped_head = buf.substr(0, 4096);
      skipped_tail = buf.size() > 4096 ? buf.substr(buf.size() - 4096) : buf;
      buf.clear();
      skipping = true;
    }
  }
  if (hooks.on_eof) hooks.on_eof();
  std::unique_lock lock(mu);
  idle.wait(lock, [&] { return active == 0; });
}

}  // namespace vigil::rpc
