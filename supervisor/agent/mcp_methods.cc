#include "supervisor/agent/mcp_methods.h"

#include <unistd.h>

#include <algorithm>

#include "supervisor/agent/mcp_background.h"
#include "supervisor/agent/mcp_resources.h"
#include "supervisor/agent/wire_json.h"

extern char** environ;

namespace vigil {
namespace {

using json = nlohmann::json;

// What a client says in its own words (a cancel's reason) is kept to this, in the log.
constexpr std::size_t kMaxReason = 512;

json output_schema() {
  const json flag = {{"type", "boolean"}};
  return {
      {"type", "object"},
      {"properties",
       {{"command", {{"type", "integer"}, {"description", "the command's number in the session log"}}},
        {"exit_code", {{"type", "integer"}, {"description", "128+N when signal N ended it"}}},
        {"timed_out", flag},
        {"cancelled", flag},
        {"stdout", {{"type", "string"}}},
        {"stderr", {{"type", "string"}}},
        {"stdout_truncated", flag},
        {"stderr_truncated", flag},
        {"violations",
         {{"type", "array"},
          {"description",
           "what the sandbox stopped or moved aside (docs/annotation.md's JSON, one object each)"},
          {"items",
           {{"type", "object"},
            {"properties",
             {{"status", {{"type", "string"}, {"enum", {"quarantined", "unguarded", "denied"}}}},
              {"kind", {{"type", "string"}}}}},
            {"required", {"status"}}}}}},
        {"annotation", {{"type", "string"}, {"description", "the <sandbox_violations> block, \"\" when none"}}},
        {"log", {{"type", "string"}, {"description", "the session log (vigil replay reads it)"}}}}},
      {"required",
       {"command", "exit_code", "timed_out", "cancelled", "stdout", "stderr", "stdout_truncated",
        "stderr_truncated", "violations", "annotation", "log"}}};
}

bool at_least(std::string_view version, std::string_view since) {
  return version >= since;  // the versions are dates, YYYY-MM-DD
}

std::string reason_of(const json& params) {
  const auto r = params.is_object() ? params.find("reason") : params.end();
  if (r == params.end() || !r->is_string()) return "";
  std::string s = r->get<std::string>();
  s.erase(std::remove(s.begin(), s.end(), '\0'), s.end());
  if (s.size() > kMaxReason) s.resize(kMaxReason);
  return s;
}

std::vector<std::string> own_environment() {
  std::vector<std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) out.emplace_back(*e);
  return out;
}

}  // namespace

std::string negotiate_mcp_version(std::string_view requested) {
  for (const auto v : kMcpVersions) {
    if (v == requested) return std::string(v);
  }
  return std::string(kMcpVersions.front());
}

json violations_list(const json& violations) {
  json out = json::array();
  if (!violations.is_object()) return out;
  for (const char* status : {"quarantined", "unguarded", "denied"}) {
    const auto list = violations.find(status);
    if (list == violations.end() || !list->is_array()) continue;
    for (const auto& item : *list) {
      if (!item.is_object()) continue;
      json v = item;
      v["status"] = status;
      out.push_back(std::move(v));
    }
  }
  return out;
}

json mcp_tool(std::string_view version, const std::string& workspace) {
  json schema = {
      {"type", "object"},
      {"properties",
       {{"command", {{"type", "string"}, {"description", "shell command (bash -c)"}}},
        {"cwd",
         {{"type", "string"},
          {"description", "absolute working directory inside the workspace " + workspace +
                              " (the default)"}}},
        {"timeout", {{"type", "number"}, {"description", "seconds before it is killed"}}},
        {"env",
         {{"type", "object"},
          {"additionalProperties", {{"type", "string"}}},
          {"description", "variables set for the command, over the server's own environment"}}}}},
      {"required", json::array({"command"})}};
  json tool = {{"name", "run_command"},
               {"description",
                "Run a shell command in vigil's sandbox. The output ends with a "
                "<sandbox_violations> block when the sandbox stopped something."},
               {"inputSchema", schema}};
  if (at_least(version, "2025-03-26")) {
    // Hints for a client's UI: it writes (inside the workspace), it may do anything a
    // shell does there, running it twice is not the same as once, and the network may be
    // allowed by the settings.
    tool["annotations"] = {{"title", "Sandboxed shell"},
                           {"readOnlyHint", false},
                           {"destructiveHint", true},
                           {"idempotentHint", false},
                           {"openWorldHint", true}};
  }
  if (at_least(version, "2025-06-18")) {
    tool["title"] = "Sandboxed shell";
    tool["outputSchema"] = output_schema();
  }
  return tool;
}

json mcp_tool_result(const Ran& ran, std::string_view version, const std::string& log) {
  const int code = ran.outcome.exit_code;
  std::string text = ran.combined;
  if (ran.stdout_truncated || ran.stderr_truncated)
    text += "\n[output cut at " + std::to_string(kResultOutputCap) + " bytes a stream; the log has it all: " + log + "]";
  if (!ran.outcome.annotation.empty()) {
    if (!text.empty() && text.back() != '\n') text += '\n';
    text += ran.outcome.annotation;
  }
  if (ran.timed_out) text += "\n[killed: timed out]";
  if (code != 0) text += "\n[exit code " + std::to_string(code) + "]";
  json result = mcp_text_result(text, code != 0 || ran.timed_out);
  if (!at_least(version, "2025-06-18")) return result;
  auto violations = parse_json_object(ran.outcome.violations_json, 16);
  result["structuredContent"] = {
      {"command", ran.outcome.id},
      {"exit_code", code},
      {"timed_out", ran.timed_out},
      {"cancelled", ran.cancelled.has_value()},
      {"stdout", ran.stdout_text},
      {"stderr", ran.stderr_text},
      {"stdout_truncated", ran.stdout_truncated},
      {"stderr_truncated", ran.stderr_truncated},
      {"violations", violations_list(violations ? *violations : json::object())},
      {"annotation", ran.outcome.annotation},
      {"log", log}};
  return result;
}

std::string McpServer::version() {
  std::lock_guard lock(mu_);
  return version_.value_or(std::string(kMcpVersions.back()));
}

std::optional<rpc::RpcError> McpServer::admit(const std::string& method, const json& params,
                                              const json& id, bool has_id) {
  if (method == "notifications/cancelled") {
    // Here, on the reading thread: the request it names was registered before it.
    if (params.is_object() && params.contains("requestId")) {
      running_.cancel_request(params["requestId"].dump(),
                              {"client", "notifications/cancelled", reason_of(params)});
    }
    return std::nullopt;
  }
  if (method == "ping" || !has_id) return std::nullopt;
  std::lock_guard lock(mu_);
  if (method == "initialize") {
    if (version_) return rpc::RpcError{rpc::kInvalidRequest, "initialize: this session is already initialized"};
    const auto v = params.is_object() ? params.find("protocolVersion") : params.end();
    if (v == params.end() || !v->is_string()) {
      return rpc::RpcError{rpc::kInvalidParams,
                           "initialize: protocolVersion (a string such as " +
                               std::string(kMcpVersions.front()) + ") is required"};
    }
    version_ = negotiate_mcp_version(v->get<std::string>());
    return std::nullopt;
  }
  if (!version_) {
    return rpc::RpcError{rpc::kInvalidRequest,
                         "not initialized: send initialize first (only ping may come before it)"};
  }
  if (method == "tools/call" && !running_.add(id.dump())) {
    return rpc::RpcError{rpc::kInvalidRequest,
                         "a request with the id " + id.dump() + " is still in flight: use a new id"};
  }
  return std::nullopt;
}

std::variant<RunParams, std::string> McpServer::tool_run(const std::string& tool, const json& args) {
  if (!args.is_object()) return tool + ": arguments must be an object";
  if (!args.contains("command") || !args["command"].is_string())
    return tool + ": command (a string) is required";
  json run = {{"argv", {"/bin/bash", "-c", args["command"]}}};
  for (const char* key_name : {"cwd", "timeout"}) {
    if (args.contains(key_name)) run[key_name] = args[key_name];
  }
  auto p = run_params(run, session_.workspace());
  if (auto* e = std::get_if<rpc::RpcError>(&p)) return e->message;
  RunParams rp = std::get<RunParams>(std::move(p));
  if (args.contains("env")) {
    auto env = env_entries(args["env"], own_environment());
    if (auto* e = std::get_if<rpc::RpcError>(&env)) return e->message;
    rp.env = std::get<std::vector<std::string>>(std::move(env));
  }
  return rp;
}

rpc::Reply McpServer::call(const json& params, rpc::Out& out, const json& id) {
  const std::string key = id.dump();
  auto stop = running_.find(key);
  const RunningCommands::Held unregister(running_, key);
  if (!stop) return rpc::RpcError{rpc::kServerError, "the request was not registered"};
  if (!params.is_object() || !params.contains("name") || !params["name"].is_string())
    return rpc::RpcError{rpc::kInvalidParams, "tools/call: name (a string) is required"};
  const json args = params.value("arguments", json::object());
  const std::string name = params["name"].get<std::string>();
  if (std::find(kMcpBackgroundTools.begin(), kMcpBackgroundTools.end(), name) != kMcpBackgroundTools.end()) {
    if (!args.is_object()) return mcp_tool_error(name + ": arguments must be an object");
    return mcp_background_call(background_, name, args, [&] { return tool_run(name, args); });
  }
  if (name != "run_command") {
    return rpc::RpcError{rpc::kInvalidParams,
                         "unknown tool " + params["name"].dump() +
                             ": the tools are run_command, start_command, read_output, stop_command "
                             "and list_commands"};
  }
  auto p = tool_run(name, args);
  if (auto* e = std::get_if<std::string>(&p)) return mcp_tool_error(*e);
  RunParams rp = std::get<RunParams>(std::move(p));
  // Streaming: with the client's progress token (params._meta.progressToken), each chunk
  // of output as it comes, as notifications/progress (progress: the bytes so far; the
  // chunk as its message). The result still has the whole text.
  json token;
  if (const auto meta = params.find("_meta"); meta != params.end() && meta->is_object()) {
    if (const auto t = meta->find("progressToken");
        t != meta->end() && (t->is_string() || t->is_number_integer()))
      token = *t;
  }
  std::uint64_t sent = 0;
  auto on_output = [&](OutputStream, std::string_view bytes) {
    if (token.is_null()) return;
    sent += bytes.size();
    out.notify("notifications/progress",
               {{"progressToken", token}, {"progress", sent}, {"message", std::string(bytes)}});
  };
  auto ran = run_one(session_, rp, *stop, {}, on_output);
  // MCP: a cancelled request is answered by nothing (the client has stopped waiting).
  if (stop->cancelled()) return rpc::NoReply{};
  if (!ran) return mcp_tool_error(ran.error().message);
  return mcp_tool_result(*ran, version(), session_.log_path());
}

std::map<std::string, rpc::Method> McpServer::methods() {
  std::map<std::string, rpc::Method> m;
  m["initialize"] = [this](const json&, rpc::Out&, const json&) -> rpc::Reply {
    return json{{"protocolVersion", version()},
                {"capabilities",
                 {{"tools", {{"listChanged", false}}},
                  {"resources", {{"subscribe", false}, {"listChanged", false}}}}},
                {"serverInfo", {{"name", "vigil"}, {"version", "0.1.0"}}},
                {"instructions",
                 "run_command runs a shell command in vigil's sandbox; it may write only inside "
                 "the workspace " + session_.workspace() + " (and its temp dir)."}};
  };
  m["notifications/initialized"] = [](const json&, rpc::Out&, const json&) -> rpc::Reply {
    return json();
  };
  m["ping"] = [](const json&, rpc::Out&, const json&) -> rpc::Reply { return json::object(); };
  m["tools/list"] = [this](const json&, rpc::Out&, const json&) -> rpc::Reply {
    json tools = json::array({mcp_tool(version(), session_.workspace())});
    for (auto& t : mcp_background_tools(version(), session_.workspace())) tools.push_back(std::move(t));
    return json{{"tools", tools}};
  };
  m["tools/call"] = [this](const json& params, rpc::Out& out, const json& id) -> rpc::Reply {
    return call(params, out, id);
  };
  // The session's log and its replay views (mcp_resources.h).
  m["resources/list"] = [](const json&, rpc::Out&, const json&) -> rpc::Reply {
    return json{{"resources", mcp_resource_list()}};
  };
  m["resources/templates/list"] = [](const json&, rpc::Out&, const json&) -> rpc::Reply {
    return json{{"resourceTemplates", mcp_resource_templates()}};
  };
  m["resources/read"] = [this](const json& params, rpc::Out&, const json&) -> rpc::Reply {
    const auto uri = params.is_object() ? params.find("uri") : params.end();
    if (uri == params.end() || !uri->is_string())
      return rpc::RpcError{rpc::kInvalidParams, "resources/read: uri (a string) is required"};
    auto text = read_mcp_resource(uri->get<std::string>(), session_.log_path());
    // MCP: an unknown resource is -32002.
    if (!text && text.error().code == Errc::kNotFound && !mcp_resource_of(uri->get<std::string>()))
      return rpc::RpcError{-32002, "resource not found: " + uri->dump() + " (" + text.error().message + ")"};
    if (!text) return rpc::RpcError{rpc::kServerError, text.error().message};
    const bool raw = mcp_resource_of(uri->get<std::string>())->raw_log;
    return json{{"contents",
                 json::array({{{"uri", *uri},
                               {"mimeType", raw ? "application/x-ndjson" : "text/plain"},
                               {"text", std::move(*text)}}})}};
  };
  return m;
}

rpc::ServeHooks McpServer::hooks() {
  rpc::ServeHooks h;
  h.admit = [this](const std::string& method, const json& params, const json& id, bool has_id) {
    return admit(method, params, id, has_id);
  };
  // MCP's stdio transport: the client ends the session by closing the server's stdin.
  // What still runs then is nobody's: its whole sandbox ends (command.cancel, by
  // "disconnect").
  h.on_eof = [this] {
    running_.cancel_all({"disconnect", "eof", ""});
    background_.kill_all({"disconnect", "eof", ""});
  };
  return h;
}

}  // namespace vigil
