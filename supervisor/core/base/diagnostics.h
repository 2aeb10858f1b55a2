// vigil's own messages on stderr ("vigil: ..." and "vigil: warning: ..."): one line
// each, whatever the message holds. A message names paths, hosts and settings values a
// command or a settings file chose, so it is shown through escape_text() (display_text.h):
// a planted name cannot run a terminal escape (OSC 52 writes the clipboard) or forge a
// line. tools/lint_display_text.py keeps printing outside this module escaped.
#pragma once

#include <string_view>

namespace vigil {

// "vigil: <message>\n" on stderr.
void print_error(std::string_view message);
// "vigil: warning: <message>\n" on stderr.
void print_warning(std::string_view message);

}  // namespace vigil
