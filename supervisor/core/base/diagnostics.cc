#include "supervisor/core/base/diagnostics.h"

#include <cstdio>
#include <string>

#include "supervisor/core/base/display_text.h"

namespace vigil {
namespace {

void print_line(const char* prefix, std::string_view message) {
  // One write per line: lines of concurrent sessions sharing a stderr do not interleave.
  const std::string line = prefix + escape_text(message) + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace

void print_error(std::string_view message) { print_line("vigil: ", message); }

void print_warning(std::string_view message) { print_line("vigil: warning: ", message); }

}  // namespace vigil
