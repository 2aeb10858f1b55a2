// The one base64 (RFC 4648, standard alphabet, '=' padding). The observer appends it
// straight into its output buffer on every trapped call (observer/event_line.h), so the
// encoder appends in place: one growth of `out`, no temporary; the decoder is strict.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace vigil {

// Appends the encoding of `bytes` to `out` (4 * ceil(n / 3) characters).
void base64_append(std::string& out, std::string_view bytes);
std::string base64_encode(std::string_view bytes);

// The bytes, or nullopt for anything but the canonical encoding: a length that is a
// multiple of 4, the alphabet only, padding only at the end, and zero bits below the last
// whole byte, so that one byte string has exactly one encoding (the log's lines are
// compared byte for byte).
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace vigil
