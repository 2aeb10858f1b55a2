// vigil's own messages on stderr ("vigil: ..." and "vigil: warning: ..."): one line
// each, whatever the message holds. A message names paths, hosts and settings values a
// command or a settings file chose, so it is shown through escape_text() (display_text.h):
// a planted name cannot run a terminal escape (OSC 52 writes the clipboard) or forge a
// line. tools/lint_display_text.py keeps printing outside this module escaped.
//
// The lines go through one spdlog logger whose pattern writes exactly the bytes of
// diagnostic_line() (diagnostic_line.h): a harness parsing stderr sees the same lines it
// always did. Levels (VIGIL_LOG, `vigil -v`) choose which are shown; the default, info,
// shows errors, warnings and notices, i.e. everything vigil printed before levels existed.
#pragma once

#include <chrono>
#include <string_view>

#include "supervisor/core/base/diagnostic_line.h"
#include "supervisor/core/base/result.h"

namespace vigil {

// "vigil: <message>\n" on stderr (level error).
void print_error(std::string_view message);
// Prints "vigil: <message>" (print_error) and returns the exit status for that kind of
// error (exit_code_for(), exit_codes.h): how every subcommand ends on an error.
int report(const Error& e);
// "vigil: warning: <message>\n" on stderr.
void print_warning(std::string_view message);
// "vigil: <message>\n" on stderr (level info: what the user asked to be told, such as
// the session log's path or the proxy's address).
void print_notice(std::string_view message);
// "vigil: debug: <message>\n", only at VIGIL_LOG=debug / `vigil -v` or more.
void print_debug(std::string_view message);

// The level in force (default kInfo) and whether a line of `level` is shown. Cheap: check
// debug_enabled() before building a debug line's text.
LogLevel log_level();
void set_log_level(LogLevel level);
inline bool debug_enabled() { return log_level() <= LogLevel::kDebug; }

// The level from VIGIL_LOG's value (nullptr or empty: the default) and `vigil -v`
// (at least debug). A value that is not a level keeps the default, with a warning that
// names the valid ones.
void configure_logging(const char* vigil_log, bool verbose);

// At debug: "vigil: debug: time NAME: 1.234 ms" when it ends (end() or its scope).
// Costs one branch when debug is off.
class DebugPhase {
 public:
  explicit DebugPhase(std::string_view name);
  ~DebugPhase();
  DebugPhase(const DebugPhase&) = delete;
  DebugPhase& operator=(const DebugPhase&) = delete;
  void end();

 private:
  std::string_view name_;
  std::chrono::steady_clock::time_point start_;
  bool running_;
};

}  // namespace vigil
