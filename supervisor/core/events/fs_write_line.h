// The observer's fs.write line read without a JSON document. vigil-init sends one fs.write
// line per trapped write (observer/event_line.h), and reading each through a generic
// parser into a DOM and then field by field was most of the supervisor's CPU per trapped
// write; on two CPUs that CPU is taken from the command and vigil-init.
//
// read_fs_write_line() reads only the strict shape vigil-init writes: one flat object, no
// whitespace, printable ASCII with the escapes \" \\ \/ \b \f \n \r \t and \u00XX below
// 0x80, numbers as plain decimal digits, byte strings as strings or {"b64":"..."}, only
// the fields the observer sets (kind, pid, syscall, path, flags, from, from_resolved,
// resolved, verdict, reason, result), each at most once. Whatever it reads it then holds
// to the same bounds and checks as parse_untrusted_event_line(), and validate().
//
// It never refuses: for any line it cannot read, or that would be refused, it returns
// nullopt and the caller parses the line the general way, which says why. So it accepts
// only lines the general parser accepts, with the very same record (the unit tests and
// tests/fuzz/fuzz_event_line.cc hold the two to that).
#pragma once

#include <optional>
#include <string_view>

#include "supervisor/core/events/event_schema.h"

namespace vigil::events {

std::optional<FsWrite> read_fs_write_line(std::string_view line, const Limits& limits);

}  // namespace vigil::events
