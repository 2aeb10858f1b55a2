// The session log's hottest record written straight to its canonical line. A command that
// writes many files makes one fs.write record per call, and building a JSON document for
// each only to print it again was most of the supervisor's time per trapped write after
// parsing. serialize_fast() prints exactly what events::serialize() prints (same keys in
// the same order, the same ASCII-only escaping, non-UTF-8 bytes as {"b64": ...}); the unit
// tests hold the two equal on hand-picked and random records.
#pragma once

#include <optional>
#include <string>

#include "supervisor/core/events/event_schema.h"

namespace vigil::events {

// The canonical line of `e` (no newline) for the kinds written here (fs.write); nullopt for
// every other kind, and for any record with a word that is not UTF-8 where the schema
// expects plain text: events::serialize() writes those.
std::optional<std::string> serialize_fast(const Event& e);

}  // namespace vigil::events
