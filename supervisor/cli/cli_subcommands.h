// Which of vigil's subcommands main() registers with CLI11 before it parses argv.
//
// Registering a subcommand is not free: CLI11 allocates an App, an Option per flag and a
// Validator per check, with their help strings, and `vigil run` is on every agent
// command's path. The command line names the subcommand as its first argument (the top
// level has only --help and --version, which take no value), so only that one needs to
// exist: its parse, --help text, usage errors and exit codes are the same with or without
// its siblings beside it. Anything else (no argument, --help, an unknown word, a typo
// CLI11 should report) registers them all, so the top-level help lists every subcommand.
#pragma once

#include <span>
#include <string_view>

namespace vigil {

struct SubcommandSet {
  bool run = false;
  bool explain = false;
  bool probe = false;
  bool proxy = false;
  bool replay = false;
  bool session = false;  // session, serve, mcp (supervisor/cli/session_command.cc)
  bool logs = false;     // logs prune (supervisor/cli/logs_command.cc)
  bool forensics = false;  // learn, export (learn_command.cc, export_command.cc)

  static SubcommandSet all() { return {true, true, true, true, true, true, true, true}; }
  friend bool operator==(const SubcommandSet&, const SubcommandSet&) = default;
};

// `args` is argv without argv[0].
SubcommandSet subcommands_to_register(std::span<const char* const> args);

}  // namespace vigil
