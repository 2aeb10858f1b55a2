// The observer's event lines, written straight into its output buffer: one flat JSON
// object per line, built field by field with typed calls (no DOM, no allocation beyond
// the buffer's own growth). It runs once per trapped syscall, so it is kept to what the
// supervisor's parser (supervisor/core/events/event_schema.h, parse_untrusted_event_line) accepts:
//   - a byte string that is all printable-or-escapable ASCII is a JSON string, unless
//     escaping would make it longer than base64 (mostly control bytes);
//   - any other byte string (UTF-8 or not: paths are bytes) is {"b64": "<base64>"},
//     which the supervisor decodes back to the exact bytes.
// So no value grows beyond 4/3 of its bytes plus 10, and a line of bounded fields stays
// under the supervisor's line limit (a longer line would be refused, its event lost).
// Keys are the caller's constants and go through the same escaping as values.
// Pure; not thread-safe (one writer per buffer).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "supervisor/core/base/base64.h"

namespace vigil::init {

class EventLine {
 public:
  // Starts `{"kind":"<kind>"` at the end of `out`.
  EventLine(std::string* out, std::string_view kind);
  EventLine& bytes(std::string_view key, std::string_view value);
  EventLine& number(std::string_view key, std::int64_t value);
  EventLine& unsigned_number(std::string_view key, std::uint64_t value);
  EventLine& boolean(std::string_view key, bool value);
  EventLine& bytes_array(std::string_view key, const std::vector<std::string>& values);
  // Closes the object and ends the line ('\n'). Call exactly once.
  void finish();

 private:
  void key(std::string_view k);
  void value_bytes(std::string_view v);
  std::string* out_;
};

// Standard base64 with '=' padding, appended in place: the one base64
// (supervisor/core/base/base64.h), under the name the agreement test uses.
inline void append_base64(std::string* out, std::string_view bytes) { base64_append(*out, bytes); }

}  // namespace vigil::init
