#include "supervisor/agent/serve_methods.h"

#include <poll.h>

#include <algorithm>
#include <chrono>

#include "supervisor/agent/rpc_run.h"
#include "supervisor/agent/wire_json.h"

namespace vigil {
namespace {

using json = nlohmann::json;

using rpc::bad_params;

json violations_object(const std::string& line) {
  auto v = parse_json_object(line, 16);
  return v ? std::move(*v) : json::object();
}

// Whether the reader of `fd` (a pipe or socket) has gone, waiting up to `ms` for it (no
// event asked for: POLLERR and POLLHUP are reported all the same).
bool reader_gone(int fd, int ms) {
  pollfd p{fd, 0, 0};
  return ::poll(&p, 1, ms) == 1 && (p.revents & (POLLERR | POLLHUP)) != 0;
}

std::optional<std::string> handle_of(const json& params) {
  const auto h = params.is_object() ? params.find("handle") : params.end();
  if (h == params.end() || !h->is_string()) return std::nullopt;
  return h->get<std::string>();
}

rpc::RpcError no_such(const std::string& handle) {
  return rpc::RpcError{rpc::kInvalidParams,
                       "no background command " + json(handle).dump() +
                           " in this session (list names them; an ended one is kept among the "
                           "last 64)"};
}

// A JSON number as a count (offset, max, timeout in ms): absent is `fallback`.
std::optional<std::uint64_t> count_of(const json& params, const char* key, std::uint64_t fallback) {
  const auto v = params.find(key);
  if (v == params.end()) return fallback;
  if (!v->is_number_unsigned()) return std::nullopt;
  return v->get<std::uint64_t>();
}

}  // namespace

void RpcAsks::ask(const AskPrompt& p, AskReply reply) {
  const std::string id = "ask-" + std::to_string(p.ask);
  {
    std::lock_guard lock(mu_);
    pending_[id] = std::move(reply);
  }
  json choices = {"once", "session"};
  if (p.can_always) choices.push_back("always");
  choices.push_back("deny");
  // From the proxy's thread: queued, never waited for (supervisor/agent/rpc_out.h).
  out_.post(json{{"jsonrpc", "2.0"},
                 {"id", id},
                 {"method", "ask"},
                 {"params",
                  {{"ask", p.ask},
                   {"command", p.command},
                   {"proto", p.proto},
                   {"host", p.host},
                   {"port", p.port},
                   {"address", p.address},
                   {"entry", p.entry},
                   {"timeout", p.timeout_s},
                   {"choices", choices}}}});
}

void RpcAsks::on_reply(const json& msg) {
  const json& id = msg["id"];
  if (!id.is_string()) return;
  AskReply reply;
  {
    std::lock_guard lock(mu_);
    auto it = pending_.find(id.get<std::string>());
    if (it == pending_.end()) return;
    reply = std::move(it->second);
    pending_.erase(it);
  }
  std::string answer;
  if (auto r = msg.find("result"); r != msg.end()) {
    const auto a = r->is_object() ? r->find("answer") : r->end();
    answer = a != r->end() && a->is_string() ? a->get<std::string>() : r->dump();
  } else {
    answer = "an error reply: " + msg["error"].dump();
  }
  (void)reply(answer);
}

rpc::Reply ServeServer::run(const json& params, rpc::Out& out, const json& request) {
  const std::string key = request.dump();
  auto stop = running_.find(key);
  const RunningCommands::Held unregister(running_, key);
  CommandStop own;  // a notification's run: nobody can cancel it by id
  auto p = run_params(params, session_.workspace());
  if (auto* e = std::get_if<rpc::RpcError>(&p)) return *e;
  if (const auto b = params.find("background"); b != params.end()) {
    if (!b->is_boolean()) return bad_params("background: true or false");
    if (b->get<bool>()) {
      auto started = background_.start(std::get<RunParams>(std::move(p)));
      if (auto* e = std::get_if<rpc::RpcError>(&started)) return *e;
      return background_json(std::get<BackgroundStatus>(started));
    }
  }
  std::uint64_t id = 0;
  auto ran = run_one(
      session_, std::get<RunParams>(p), stop ? *stop : own, [&](std::uint64_t i) { id = i; },
      [&](OutputStream s, std::string_view bytes) {
        out.notify("output", {{"request", request},
                              {"command", id},
                              {"stream", s == OutputStream::kStdout ? "stdout" : "stderr"},
                              {"data", json_bytes(std::string(bytes))}});
      });
  if (!ran) return rpc::RpcError{rpc::kServerError, ran.error().message};
  json result = {{"command", ran->outcome.id},
                 {"exit_code", ran->outcome.exit_code},
                 {"timed_out", ran->timed_out},
                 {"cancelled", ran->cancelled.has_value()},
                 {"annotation", ran->outcome.annotation},
                 {"violations", violations_object(ran->outcome.violations_json)}};
  if (ran->cancelled) result["cancelled_by"] = {{"by", ran->cancelled->by}, {"via", ran->cancelled->via}};
  return result;
}

std::map<std::string, rpc::Method> ServeServer::methods() {
  std::map<std::string, rpc::Method> m;
  m["run"] = [this](const json& params, rpc::Out& out, const json& request) -> rpc::Reply {
    return run(params, out, request);
  };
  // {"request": <the run's id>} or {"command": N}: {"cancelled": true} when it was running.
  add_background_methods(m);
  m["cancel"] = [this](const json& params, rpc::Out&, const json&) -> rpc::Reply {
    const CancelWhy why{"client", "cancel", ""};
    if (params.is_object() && params.contains("request"))
      return json{{"cancelled", running_.cancel_request(params["request"].dump(), why)}};
    if (params.is_object() && params.contains("command") && params["command"].is_number_unsigned())
      return json{{"cancelled", running_.cancel_command(params["command"].get<std::uint64_t>(), why)}};
    return bad_params("cancel: {\"request\": the run's id} or {\"command\": its number}");
  };
  m["policy.update"] = [this](const json& params, rpc::Out&, const json&) -> rpc::Reply {
    std::vector<std::string> add, remove;
    for (const auto& [key, list] : {std::pair{"add", &add}, std::pair{"remove", &remove}}) {
      auto it = params.find(key);
      if (it == params.end()) continue;
      if (!it->is_array()) return bad_params(std::string(key) + ": an array of domains");
      for (const auto& d : *it) {
        if (!d.is_string()) return bad_params(std::string(key) + ": an array of domains");
        list->push_back(d.get<std::string>());
      }
    }
    if (auto r = session_.update_allowed_domains(add, remove); !r)
      return rpc::RpcError{rpc::kInvalidParams, r.error().message};
    return json{{"allowed_domains", session_.allowed_domains()}};
  };
  return m;
}

void ServeServer::add_background_methods(std::map<std::string, rpc::Method>& m) {
  // {"handle", "offset" (0), "max" (65536)}: the output from offset, as it came.
  m["output"] = [this](const json& params, rpc::Out&, const json&) -> rpc::Reply {
    const auto handle = handle_of(params);
    const auto offset = count_of(params, "offset", 0);
    const auto max = count_of(params, "max", 65536);
    if (!handle || !offset || !max)
      return bad_params("output: {\"handle\": \"bg-N\", \"offset\": bytes, \"max\": bytes}");
    auto c = background_.output(*handle, *offset, static_cast<std::size_t>(*max));
    if (!c) return no_such(*handle);
    json j = background_json(c->status);
    j["data"] = json_bytes(c->data);
    j["offset"] = c->offset;
    j["next_offset"] = c->next;
    j["dropped"] = c->dropped;
    return j;
  };
  // {"handle", "timeout" (ms, 0: none)}: its status once it has ended or the wait is over.
  m["wait"] = [this](const json& params, rpc::Out&, const json&) -> rpc::Reply {
    const auto handle = handle_of(params);
    const auto ms = count_of(params, "timeout", 0);
    if (!handle || !ms) return bad_params("wait: {\"handle\": \"bg-N\", \"timeout\": ms}");
    const auto limit = *ms == 0 ? std::chrono::milliseconds(std::chrono::hours(24 * 365))
                                : std::chrono::milliseconds(std::min<std::uint64_t>(*ms, 86'400'000));
    auto s = background_.wait(*handle, limit);
    if (!s) return no_such(*handle);
    return background_json(*s);
  };
  m["kill"] = [this](const json& params, rpc::Out&, const json&) -> rpc::Reply {
    const auto handle = handle_of(params);
    if (!handle) return bad_params("kill: {\"handle\": \"bg-N\"}");
    const auto killed = background_.kill(*handle, {"client", "kill", ""});
    if (!killed) return no_such(*handle);
    return json{{"killed", *killed}};
  };
  m["list"] = [this](const json&, rpc::Out&, const json&) -> rpc::Reply {
    json all = json::array();
    for (const auto& s : background_.list()) all.push_back(background_json(s));
    return json{{"commands", all}};
  };
}

rpc::ServeHooks ServeServer::hooks(int out_fd) {
  rpc::ServeHooks h;
  h.on_response = [this](const json& reply) { asks_.on_reply(reply); };
  h.admit = [this](const std::string& method, const json& params, const json& id,
                   bool has_id) -> std::optional<rpc::RpcError> {
    // LSP's notification, here on the reading thread: the run it names came before it.
    if (method == "$/cancelRequest") {
      if (params.is_object() && params.contains("id"))
        running_.cancel_request(params["id"].dump(), {"client", "$/cancelRequest", ""});
      return std::nullopt;
    }
    if (method == "run" && has_id && !running_.add(id.dump())) {
      return rpc::RpcError{rpc::kInvalidRequest,
                           "a request with the id " + id.dump() + " is still in flight: use a new id"};
    }
    return std::nullopt;
  };
  // EOF alone is "no more requests" (the ones in flight are answered); EOF with the
  // reader of our stdout gone is a client that went away.
  h.on_eof = [this, out_fd] {
    // No more requests: nobody can read, wait for or kill a background command now.
    background_.kill_all({"disconnect", "eof", ""});
    watch_ = std::thread([this, out_fd] {
      while (!stop_watch_) {
        if (reader_gone(out_fd, 100)) {
          running_.cancel_all({"disconnect", "eof", ""});
          return;
        }
      }
    });
  };
  return h;
}

ServeServer::~ServeServer() {
  stop_watch_ = true;
  if (watch_.joinable()) watch_.join();
}

}  // namespace vigil
