// The bytes of one of vigil's stderr lines, and the levels that choose which are shown.
// Pure and free of any logging library: vigil-init (observer/) writes its few lines with
// write_diagnostic_line() and stays small; the vigil CLI goes through diagnostics.h (the
// spdlog logger), whose pattern puts exactly these bytes out.
#pragma once

#include <string>
#include <string_view>

#include "supervisor/core/base/result.h"

namespace vigil {

// VIGIL_LOG's values, most to least verbose. kInfo is the default: errors, warnings and
// the notices vigil has always printed ("vigil: session log: ..."), nothing else.
enum class LogLevel { kTrace, kDebug, kInfo, kWarning, kError, kOff };

// "trace", "debug", "info", "warning" (or "warn"), "error", "off"; case-insensitive.
// Anything else is an error naming the valid values.
Result<LogLevel> parse_log_level(std::string_view text);
// "trace, debug, info, warning, error, off": for messages and --help.
std::string_view log_level_names();

// The word after "vigil: " that names the level: "" (errors and notices), "warning: ",
// "debug: ", "trace: ". diagnostic_prefix() is "vigil: " followed by it.
std::string_view diagnostic_level_tag(LogLevel level);
std::string diagnostic_prefix(LogLevel level);
// prefix + escape_text(message) + "\n": one line whatever the message holds.
std::string diagnostic_line(LogLevel level, std::string_view message);
// diagnostic_line() to stderr in one write, whatever the level (no filtering).
void write_diagnostic_line(LogLevel level, std::string_view message);

}  // namespace vigil
