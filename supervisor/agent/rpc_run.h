// One command of `vigil serve`'s `run` or `vigil mcp`'s run_command: its parameters,
// checked (a cwd inside the session's workspace, no NUL where a program's argument or
// environment cannot hold one, a bounded timeout), and the run itself, with its stdin fed
// from a thread, its output handed on, and its stop (timeout, cancel: command_stop.h).
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "supervisor/agent/agent_session.h"
#include "supervisor/agent/command_stop.h"
#include "supervisor/agent/rpc_stdio.h"

namespace vigil {

// Far above any real command, far below what a clock's duration can hold.
inline constexpr double kMaxTimeoutS = 30.0 * 24 * 3600;

struct RunParams {
  std::vector<std::string> argv;
  std::string cwd;
  std::optional<std::vector<std::string>> env;  // NAME=value, the command's whole environment
  std::string stdin_data;
  double timeout_s = 0;  // 0: none
};

// `p`: {"argv", "cwd", "env", "stdin", "timeout"} (docs/protocol.md). `workspace`: the
// session's, resolved (AgentSession::workspace()); `cwd` must lie in it.
std::variant<RunParams, rpc::RpcError> run_params(const nlohmann::json& p,
                                                  const std::string& workspace);

// `env` (an object of NAME: value strings) as NAME=value entries over `base` (a name
// given replaces base's). An error names what is wrong with it.
std::variant<std::vector<std::string>, rpc::RpcError> env_entries(
    const nlohmann::json& env, const std::vector<std::string>& base = {});

struct Ran {
  CommandOutcome outcome;
  bool timed_out = false;
  std::optional<CancelWhy> cancelled;
  std::string stdout_text, stderr_text;  // as captured (each bounded: *_truncated)
  bool stdout_truncated = false, stderr_truncated = false;
  std::string combined;  // stdout and stderr as they came (MCP's text), bounded the same
};

// What a result keeps of each stream (the log keeps it all, docs/protocol.md).
inline constexpr std::size_t kResultOutputCap = 1u << 20;

// Runs one command. `stop`: the request's (RunningCommands::add), started here.
Result<Ran> run_one(AgentSession& session, const RunParams& p, CommandStop& stop,
                    const std::function<void(std::uint64_t)>& on_id,
                    const std::function<void(OutputStream, std::string_view)>& on_output);

}  // namespace vigil
