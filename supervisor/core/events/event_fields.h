// The field table of the event schema (event_fields.cc): for every kind of record, its
// fields in canonical order, each with its JSON type, whether it must be present, and its
// bounds. It is to the event schema what policy_keys.cc is to the settings: the reader
// (event_read.cc) takes every name, type, presence and bound from it; the writer
// (event_write.cc), vigil-init's lines (observer/event_line.cc, write_record.cc) and
// docs/events.md are held to it by tests/unit/supervisor/core/events/event_fields_test.cc.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "supervisor/core/events/event_schema.h"

namespace vigil::events {

enum class FieldType {
  kBytes,       // a byte string: a JSON string, or {"b64": ...}; no NUL byte
  kData,        // a byte string that may hold NUL bytes (an output chunk)
  kBytesArray,  // an array of byte strings
  kWord,        // a plain string from a closed vocabulary or a hex digest
  kInteger,     // an integer within [lo, hi]
  kCount,       // a non-negative integer
  kBoolean,     // true or false (written only when true, except where the table says)
  kObject,      // a nested object its kind reads itself (versions, scope, counters)
};

enum class Presence {
  kRequired,  // a record without it is malformed
  kOptional,  // absent in older logs, or only when it has something to say
};

// Which of Limits' bounds a byte string (or each entry of an array) is held to.
enum class Bound { kNone, kPath, kText, kArg, kData };

struct FieldSpec {
  std::string_view name;
  FieldType type;
  Presence presence;
  Bound bound = Bound::kNone;
  std::int64_t lo = 0;  // kInteger only
  std::int64_t hi = 0;
};

// The fields of one kind, in the order serialize() writes them (the envelope's fields,
// v seq t session src cmd kind prev, are not a kind's).
std::span<const FieldSpec> fields_of(Kind kind);

// The field of `kind` called `name`, or nullptr.
const FieldSpec* field_of(Kind kind, std::string_view name);

// A bound's size under `lim` (0 for kNone).
std::size_t bound_size(Bound b, const Limits& lim);

}  // namespace vigil::events
