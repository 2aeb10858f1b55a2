#include "supervisor/agent/mcp_background.h"

#include <chrono>

namespace vigil {
namespace {

using json = nlohmann::json;

json handle_schema() {
  return {{"type", "object"},
          {"properties", {{"handle", {{"type", "string"}, {"description", "start_command's handle, bg-N"}}}}},
          {"required", json::array({"handle"})}};
}

// What every status holds (background_json()).
json status_properties() {
  const json flag = {{"type", "boolean"}};
  return {{"handle", {{"type", "string"}}},
          {"command", {{"type", "integer"}, {"description", "its number in the session log"}}},
          {"argv", {{"type", "array"}, {"items", {{"type", "string"}}}}},
          {"running", flag},
          {"output_bytes", {{"type", "integer"}}},
          {"exit_code", {{"type", "integer"}}},
          {"timed_out", flag},
          {"cancelled", flag},
          {"annotation", {{"type", "string"}, {"description", "the <sandbox_violations> block, \"\" when none"}}},
          {"violations", {{"type", "object"}}},
          {"error", {{"type", "string"}}}};
}

json tool(std::string_view version, const char* name, const char* title, const std::string& description,
          json input, json output, bool read_only, bool destructive) {
  json t = {{"name", name}, {"description", description}, {"inputSchema", std::move(input)}};
  if (version >= "2025-03-26") {
    t["annotations"] = {{"title", title},
                        {"readOnlyHint", read_only},
                        {"destructiveHint", destructive},
                        {"idempotentHint", read_only},
                        {"openWorldHint", !read_only}};
  }
  if (version >= "2025-06-18") {
    t["title"] = title;
    t["outputSchema"] = std::move(output);
  }
  return t;
}

// The end of a status as the model reads it: how it ended, and the block.
std::string ending_text(const BackgroundStatus& s) {
  if (s.running) return "";
  if (!s.error.empty()) return "\n[it could not run: " + s.error + "]";
  std::string text;
  if (!s.annotation.empty()) text += "\n" + s.annotation;
  if (s.cancelled) text += "\n[stopped]";
  else if (s.timed_out) text += "\n[killed: timed out]";
  text += "\n[exited with code " + std::to_string(s.exit_code) + "]";
  return text;
}

json read_output(BackgroundCommands& bg, const std::string& handle, const json& args) {
  std::uint64_t offset = 0;
  if (const auto o = args.find("offset"); o != args.end()) {
    if (!o->is_number_unsigned()) return mcp_tool_error("read_output: offset is a byte count (next_offset of the last read)");
    offset = o->get<std::uint64_t>();
  }
  auto c = bg.output(handle, offset, 64 * 1024);
  if (!c) return mcp_tool_error("no background command " + handle + " (list_commands names them)");
  std::string text;
  if (c->dropped > 0)
    text += "[" + std::to_string(c->dropped) + " bytes before this are no longer kept: the session log has them]\n";
  text += c->data;
  if (c->next < c->status.output_bytes) {
    text += "\n[more output: read_output with offset " + std::to_string(c->next) + "]";
  } else if (c->status.running) {
    text += "\n[still running; the next read starts at offset " + std::to_string(c->next) + "]";
  } else {
    text += ending_text(c->status);
  }
  json r = mcp_text_result(text);
  json s = background_json(c->status);
  s["data"] = c->data;
  s["offset"] = c->offset;
  s["next_offset"] = c->next;
  s["dropped"] = c->dropped;
  r["structuredContent"] = std::move(s);
  return r;
}

}  // namespace

json mcp_text_result(const std::string& text, bool error) {
  return json{{"content", json::array({{{"type", "text"}, {"text", text}}})}, {"isError", error}};
}

json mcp_tool_error(const std::string& why) {
  // A tool's refusal is the tool's result (isError), which the model is shown; a protocol
  // error may be hidden from it.
  return mcp_text_result("vigil: " + why, true);
}

json mcp_background_tools(std::string_view version, const std::string& workspace) {
  json start_input = {
      {"type", "object"},
      {"properties",
       {{"command", {{"type", "string"}, {"description", "shell command (bash -c) that keeps running"}}},
        {"cwd", {{"type", "string"}, {"description", "absolute working directory inside the workspace " + workspace}}},
        {"timeout", {{"type", "number"}, {"description", "seconds before it is killed (default 3600, at most 86400)"}}},
        {"env", {{"type", "object"}, {"additionalProperties", {{"type", "string"}}}}}}},
      {"required", json::array({"command"})}};
  json status = {{"type", "object"}, {"properties", status_properties()}, {"required", json::array({"handle"})}};
  json chunk = status;
  chunk["properties"]["data"] = {{"type", "string"}};
  chunk["properties"]["offset"] = {{"type", "integer"}};
  chunk["properties"]["next_offset"] = {{"type", "integer"}};
  chunk["properties"]["dropped"] = {{"type", "integer"}};
  json read_input = handle_schema();
  read_input["properties"]["offset"] = {{"type", "integer"}, {"description", "next_offset of the last read (0: from the start)"}};
  json list_output = {{"type", "object"},
                      {"properties", {{"commands", {{"type", "array"}, {"items", {{"type", "object"}, {"properties", status_properties()}}}}}}},
                      {"required", json::array({"commands"})}};
  return json::array({
      tool(version, "start_command", "Start a background command",
           "Start a shell command in vigil's sandbox that keeps running (a dev server, a watcher) "
           "and return its handle at once. Read its output with read_output, stop it with "
           "stop_command. At most 8 run at once; all end with the session.",
           start_input, status, false, true),
      tool(version, "read_output", "Read a background command's output",
           "Output of a background command from an offset (stdout and stderr as they came), "
           "and how it ended once it has, with its <sandbox_violations> block.",
           read_input, chunk, true, false),
      tool(version, "stop_command", "Stop a background command",
           "Stop a background command (SIGTERM, then SIGKILL after 2 s) and say how it ended.",
           handle_schema(), status, false, true),
      tool(version, "list_commands", "List background commands",
           "The session's background commands, running and recently ended.",
           json{{"type", "object"}, {"properties", json::object()}}, list_output, true, false),
  });
}

json mcp_background_call(BackgroundCommands& bg, std::string_view name, const json& args,
                         const std::function<std::variant<RunParams, std::string>()>& run) {
  if (name == "list_commands") {
    json all = json::array();
    std::string text;
    for (const auto& s : bg.list()) {
      all.push_back(background_json(s));
      std::string argv;
      for (const auto& a : s.argv) argv += (argv.empty() ? "" : " ") + a;
      text += s.handle + " (command " + std::to_string(s.command) + ") " +
              (s.running ? "running" : "ended, exit code " + std::to_string(s.exit_code)) + ": " + argv + "\n";
    }
    json r = mcp_text_result(text.empty() ? "no background commands" : text);
    r["structuredContent"] = {{"commands", all}};
    return r;
  }
  if (name == "start_command") {
    auto p = run();
    if (auto* e = std::get_if<std::string>(&p)) return mcp_tool_error(*e);
    auto started = bg.start(std::get<RunParams>(std::move(p)));
    if (auto* e = std::get_if<rpc::RpcError>(&started)) return mcp_tool_error(e->message);
    const auto& s = std::get<BackgroundStatus>(started);
    json r = mcp_text_result("started " + s.handle + " (command " + std::to_string(s.command) +
                         " in the session log); read its output with read_output {\"handle\": \"" +
                         s.handle + "\"}" + ending_text(s));
    r["structuredContent"] = background_json(s);
    return r;
  }
  const auto h = args.find("handle");
  if (h == args.end() || !h->is_string()) return mcp_tool_error(std::string(name) + ": handle (bg-N, from start_command) is required");
  const std::string handle = h->get<std::string>();
  if (name == "read_output") return read_output(bg, handle, args);
  // stop_command: stopped, then its end waited for (the grace and a little more).
  const auto stopped = bg.kill(handle, {"client", "stop_command", ""});
  if (!stopped) return mcp_tool_error("no background command " + handle + " (list_commands names them)");
  auto s = bg.wait(handle, std::chrono::milliseconds(5000));
  if (!s) return mcp_tool_error("no background command " + handle);
  json r = mcp_text_result((*stopped ? "stopped " : "it had ended already: ") + handle +
                       (s->running ? " (still ending)" : "") + ending_text(*s));
  r["structuredContent"] = background_json(*s);
  return r;
}

}  // namespace vigil
