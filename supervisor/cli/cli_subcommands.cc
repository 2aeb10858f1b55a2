#include "supervisor/cli/cli_subcommands.h"

namespace vigil {

SubcommandSet subcommands_to_register(std::span<const char* const> args) {
  // The global -v/--verbose may come first: the subcommand is the word after it.
  while (!args.empty() && args[0] != nullptr &&
         (std::string_view(args[0]) == "-v" || std::string_view(args[0]) == "--verbose")) {
    args = args.subspan(1);
  }
  if (args.empty() || args[0] == nullptr) return SubcommandSet::all();
  const std::string_view first = args[0];
  SubcommandSet only;
  // Exact names only: CLI11 here matches subcommands case-sensitively and without
  // prefixes, so anything else is an error it must report with the full app in place.
  if (first == "run") {
    only.run = true;
  } else if (first == "explain") {
    only.explain = true;
  } else if (first == "doctor" || first == "probe") {
    only.probe = true;
  } else if (first == "proxy") {
    only.proxy = true;
  } else if (first == "replay" || first == "undo") {  // undo reads logs as replay does
    only.replay = true;
  } else if (first == "session" || first == "serve" || first == "mcp") {
    only.session = true;
  } else if (first == "logs") {
    only.logs = true;
  } else if (first == "learn" || first == "export" || first == "verify") {
    only.forensics = true;
  } else if (first == "--version" && args.size() == 1) {
    // The version flag ends the parse before any subcommand is required.
    return only;
  } else {
    return SubcommandSet::all();
  }
  return only;
}

std::optional<std::vector<std::string>> thin_run_command(std::span<const char* const> args,
                                                         const char* vigil_session) {
  if (vigil_session == nullptr || *vigil_session == '\0') return std::nullopt;
  if (args.size() < 3 || args[0] == nullptr || args[1] == nullptr) return std::nullopt;
  if (std::string_view(args[0]) != "run" || std::string_view(args[1]) != "--") return std::nullopt;
  std::vector<std::string> command;
  for (const char* a : args.subspan(2)) {
    if (a == nullptr) return std::nullopt;
    command.emplace_back(a);
  }
  return command;
}

}  // namespace vigil
