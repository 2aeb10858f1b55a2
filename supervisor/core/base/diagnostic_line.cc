#include "supervisor/core/base/diagnostic_line.h"

#include <array>
#include <cstdio>

#include "supervisor/core/base/display_text.h"

namespace vigil {
namespace {

struct LevelName {
  std::string_view name;
  LogLevel level;
};
// One table: parsing, the list in messages and the prefixes agree.
constexpr std::array<LevelName, 7> kLevels{{{"trace", LogLevel::kTrace},
                                            {"debug", LogLevel::kDebug},
                                            {"info", LogLevel::kInfo},
                                            {"warning", LogLevel::kWarning},
                                            {"warn", LogLevel::kWarning},
                                            {"error", LogLevel::kError},
                                            {"off", LogLevel::kOff}}};

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const char c = (a[i] >= 'A' && a[i] <= 'Z') ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
    if (c != b[i]) return false;
  }
  return true;
}

}  // namespace

Result<LogLevel> parse_log_level(std::string_view text) {
  for (const auto& l : kLevels) {
    if (equal_ignoring_case(text, l.name)) return l.level;
  }
  return make_error(Errc::kInvalidPolicy, "VIGIL_LOG=" + std::string(text) +
                                              " is not a level: use one of " +
                                              std::string(log_level_names()));
}

std::string_view log_level_names() { return "trace, debug, info, warning, error, off"; }

std::string_view diagnostic_level_tag(LogLevel level) {
  switch (level) {
    case LogLevel::kTrace:
      return "trace: ";
    case LogLevel::kDebug:
      return "debug: ";
    case LogLevel::kWarning:
      return "warning: ";
    case LogLevel::kInfo:
    case LogLevel::kError:
    case LogLevel::kOff:
      break;
  }
  return "";
}

std::string diagnostic_prefix(LogLevel level) {
  return "vigil: " + std::string(diagnostic_level_tag(level));
}

std::string diagnostic_line(LogLevel level, std::string_view message) {
  std::string line = diagnostic_prefix(level);
  line += escape_text(message);
  line += '\n';
  return line;
}

void write_diagnostic_line(LogLevel level, std::string_view message) {
  // One write per line: lines of concurrent sessions sharing a stderr do not interleave.
  const std::string line = diagnostic_line(level, message);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace vigil
