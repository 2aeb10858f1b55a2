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

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vigil {

struct SubcommandSet {
  bool run = false;
  bool explain = false;
  bool probe = false;
  bool proxy = false;
  bool replay = false;
  bool session = false;  // session, serve, mcp (supervisor/cli/session_command.cc)
  bool logs = false;     // logs prune (supervisor/cli/logs_command.cc)
  bool forensics = false;  // learn, export, verify (learn_, export_, verify_command.cc)

  static SubcommandSet all() { return {true, true, true, true, true, true, true, true}; }
  friend bool operator==(const SubcommandSet&, const SubcommandSet&) = default;
};

// `args` is argv without argv[0].
SubcommandSet subcommands_to_register(std::span<const char* const> args);

// The thin client's fast path: `vigil run -- CMD ARGS...` with `vigil_session`
// ($VIGIL_SESSION) set and not empty is a request to the session and nothing else, so
// main() sends it without building any of the CLI (on every agent command's path). The
// command when `args` (argv without argv[0]) is exactly that form; none for anything
// else (an option, no `--`, nothing after it, the global -v, no session), which CLI11
// parses as always: the same request, warnings and errors.
std::optional<std::vector<std::string>> thin_run_command(std::span<const char* const> args,
                                                         const char* vigil_session);

}  // namespace vigil
