// The chain check of one session log, one line at a time (issue 37): what
// verify_log_lines() (supervisor/log/log_stream.h) checks over a whole file, kept as a small
// state that `vigil export --follow` carries from line to line, across restarts (in its
// cursor, supervisor/export/export_cursor.h), so a log that grows is verified as it grows
// and never re-read from its start. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "supervisor/core/events/event_schema.h"

namespace vigil {

// What the check remembers between lines.
struct ChainState {
  std::string session;       // from record 0; "" before it
  std::uint64_t next_seq = 0;
  std::string prev_hash;     // sha256 of the last line checked ("" before record 0)
  std::uint64_t prev_t = 0;
  std::string key_id;        // session.start's key_id ("" = unkeyed)
  std::string first_hash;    // sha256 of record 0: which file this state belongs to
  bool ended = false;        // session.end was checked
  bool sealed = false;       // ... and its seal matched under the user's key
  std::string broken;        // why the chain broke ("" = intact); every later line is unverified
  friend bool operator==(const ChainState&, const ChainState&) = default;
};

struct ChainStep {
  std::string hash;                     // sha256 of the line: the chain value the next prev names
  std::optional<events::Event> event;   // when the line is a record
  bool verified = false;                // this line continues an intact chain
  std::string broke;                    // set on the line where the chain breaks: why
};

// Checks `line` (one complete line, no newline) against `s` and advances it. `key`: the
// user's log key, for session.end's seal (supervisor/log/log_key.h); without it, or under
// another key, a keyed log's seal is not checked and `sealed` stays false (not a break).
ChainStep chain_step(ChainState& s, std::string_view line,
                     std::optional<std::string_view> key);

}  // namespace vigil
