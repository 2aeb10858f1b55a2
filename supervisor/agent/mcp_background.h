// `vigil mcp`'s tools for background commands (background.h): start_command (a shell
// command that keeps running: a dev server, a watcher), read_output, stop_command and
// list_commands. Each tool's refusal is its result (isError), which the model is shown.
#pragma once

#include <array>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <variant>

#include "supervisor/agent/background.h"

namespace vigil {

inline constexpr std::array<std::string_view, 4> kMcpBackgroundTools = {
    "start_command", "read_output", "stop_command", "list_commands"};

// A tool's result of one text (content), isError as given.
nlohmann::json mcp_text_result(const std::string& text, bool error = false);
// A tool's refusal as its result (isError, "vigil: " and why), which the model is shown.
nlohmann::json mcp_tool_error(const std::string& why);

// The four tools' descriptions for tools/list, for the version negotiated.
nlohmann::json mcp_background_tools(std::string_view version, const std::string& workspace);

// tools/call of one of them (`name` is one of kMcpBackgroundTools). `run` is what
// start_command runs: {"argv", "cwd", "timeout", "env"} as serve's run takes them, built
// by the caller from the tool's arguments, or a tool error already.
nlohmann::json mcp_background_call(BackgroundCommands& background, std::string_view name,
                                   const nlohmann::json& args,
                                   const std::function<std::variant<RunParams, std::string>()>& run);

}  // namespace vigil
