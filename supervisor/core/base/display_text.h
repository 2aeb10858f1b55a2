// The one escaping function for every text vigil shows a human or a model: the
// <sandbox_violations> block, replay's views and HTML report, `vigil explain`, warnings
// and errors (DESIGN.md §8). Anything a command, a settings file or a log chose (a path,
// a host, an argv word, a reason) passes through escape_text() before it is printed.
//
// What it escapes, and why (the data is generated from the Unicode Character Database by
// tools/gen_display_escape_table.py into display_escape_table.inc):
//   - C0/C1 controls and DEL: a terminal runs them (ESC ] 52 writes the clipboard,
//     ESC [ 2J clears the screen, CR/LF forge lines);
//   - format characters (general category Cf: bidi overrides and isolates, zero-width
//     space/joiners, word joiner and invisible operators, soft hyphen, U+180E, the tag
//     block U+E0000-E007F), line and paragraph separators, look-alike spaces (Zs other
//     than U+0020), private-use, surrogate and unassigned code points, and the other
//     default-ignorable code points (variation selectors, Hangul fillers, CGJ): text a
//     renderer shows as nothing, or moves, but a model reads;
//   - invalid UTF-8, byte by byte;
//   - the backslash, so an escape in the output always means an escape.
// Forms: a byte below 0x80 or not valid UTF-8 becomes \xNN; a code point \u{NNNN} (four
// to six lowercase hex digits); '\' becomes "\\". The sinks add their own syntax on top:
// the annotation also escapes '<' (\x3c, so no line can close the block for a harness
// that matches it as text), HTML also entity-escapes & < > " '.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace vigil {

enum class TextSink {
  kTerminal,    // stdout/stderr lines, explain, replay's text views
  kAnnotation,  // the <sandbox_violations> block (the model reads it)
  kHtml,        // element content and quoted attributes
};

inline constexpr std::size_t kNoCap = static_cast<std::size_t>(-1);

// The escaped text. With max_bytes set, the output (marker included) is at most
// max_bytes long: escaping stops before the first piece that would not fit, never inside
// an escape or a UTF-8 sequence, and " [cut: N more bytes]" (N raw input bytes) ends it.
std::string escape_text(std::string_view bytes, TextSink sink = TextSink::kTerminal,
                        std::size_t max_bytes = kNoCap);

// Whether a code point is shown escaped (controls, format, invisible: see above).
bool is_escaped_code_point(char32_t cp);

// Length of the valid UTF-8 sequence at s[i] (i < s.size()) and its code point in *cp,
// or 0 when the bytes there are not a valid, shortest-form sequence of a scalar value.
std::size_t utf8_sequence(std::string_view s, std::size_t i, char32_t* cp);

// Whether all of s is valid, shortest-form UTF-8 of scalar values (by utf8_sequence).
bool is_valid_utf8(std::string_view s);

// The Unicode version the table was generated from (for tests and `vigil --version`).
const char* display_escape_unicode_version();

}  // namespace vigil
