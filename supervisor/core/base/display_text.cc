#include "supervisor/core/base/display_text.h"

#include <algorithm>
#include <cstdint>
#include <iterator>

namespace vigil {
namespace {

struct CodePointRange {
  char32_t lo;
  char32_t hi;
};

#include "supervisor/core/base/display_escape_table.inc"

constexpr char kHex[] = "0123456789abcdef";

void append_hex_byte(std::string& out, unsigned char b) {
  out += "\\x";
  out += kHex[b >> 4];
  out += kHex[b & 0xfU];
}

void append_code_point(std::string& out, char32_t cp) {
  out += "\\u{";
  int shift = cp > 0xfffffU ? 20 : cp > 0xffffU ? 16 : 12;
  for (; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 0xfU];
  out += '}';
}

// The sink's own syntax, applied to one already-escaped piece.
void append_for_sink(std::string& out, std::string_view piece, TextSink sink) {
  if (sink == TextSink::kTerminal) {
    out += piece;
    return;
  }
  for (const char c : piece) {
    if (sink == TextSink::kAnnotation) {
      if (c == '<') {
        out += "\\x3c";
      } else {
        out += c;
      }
      continue;
    }
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
}

}  // namespace

std::size_t utf8_sequence(std::string_view s, std::size_t i, char32_t* cp) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) {
    *cp = b0;
    return 1;
  }
  std::size_t len = 0;
  char32_t min = 0;
  char32_t c = 0;
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    len = 2;
    c = b0 & 0x1fU;
    min = 0x80;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    len = 3;
    c = b0 & 0x0fU;
    min = 0x800;
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    len = 4;
    c = b0 & 0x07U;
    min = 0x10000;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xc0U) != 0x80U) return 0;
    c = (c << 6) | (b & 0x3fU);
  }
  if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return 0;
  *cp = c;
  return len;
}

bool is_valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    char32_t cp = 0;
    const std::size_t n = utf8_sequence(s, i, &cp);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

bool is_escaped_code_point(char32_t cp) {
  // Printable ASCII is most of what vigil shows: skip the search for it.
  if (cp >= 0x20 && cp < 0x7f) return false;
  const auto* end = std::end(kDisplayEscapeRanges);
  const auto* it = std::upper_bound(std::begin(kDisplayEscapeRanges), end, cp,
                                    [](char32_t v, const CodePointRange& r) { return v < r.lo; });
  if (it == std::begin(kDisplayEscapeRanges)) return false;
  --it;
  return cp <= it->hi;
}

const char* display_escape_unicode_version() { return kDisplayEscapeUnicodeVersion; }

std::string escape_text(std::string_view s, TextSink sink, std::size_t max_bytes) {
  // Escaping never shortens: input longer than the cap cannot fit whole. Input that might
  // is escaped whole first, so a text exactly at the cap is not cut for the marker's room.
  if (max_bytes != kNoCap && s.size() <= max_bytes) {
    std::string whole = escape_text(s, sink);
    if (whole.size() <= max_bytes) return whole;
  }
  std::string out;
  out.reserve(std::min(s.size(), max_bytes));
  auto marker = [&](std::size_t from) {
    return " [cut: " + std::to_string(s.size() - from) + " more bytes]";
  };
  // The longest marker this input can need: while a piece and it both fit, no exact check.
  const std::size_t worst_marker = max_bytes == kNoCap ? 0 : marker(0).size();
  std::string piece;
  std::string sunk;
  for (std::size_t i = 0; i < s.size();) {
    piece.clear();
    const auto b = static_cast<unsigned char>(s[i]);
    char32_t cp = 0;
    std::size_t n = b == '\\' ? 1 : utf8_sequence(s, i, &cp);
    if (b == '\\') {
      piece = "\\\\";
    } else if (n == 0) {
      append_hex_byte(piece, b);
      n = 1;
    } else if (!is_escaped_code_point(cp)) {
      piece.assign(s.substr(i, n));
    } else if (cp < 0x80) {
      append_hex_byte(piece, b);
    } else {
      append_code_point(piece, cp);
    }
    if (max_bytes == kNoCap) {
      append_for_sink(out, piece, sink);
      i += n;
      continue;
    }
    sunk.clear();
    append_for_sink(sunk, piece, sink);
    const bool last = i + n == s.size();
    if (out.size() + sunk.size() + worst_marker > max_bytes &&
        out.size() + sunk.size() + (last ? 0 : marker(i + n).size()) > max_bytes) {
      out += marker(i);
      return out;
    }
    out += sunk;
    i += n;
  }
  return out;
}

}  // namespace vigil
