#include "observer/event_line.h"

#include <charconv>

#include "supervisor/core/base/base64.h"

namespace vigil::init {
namespace {

// Bytes that may appear in a JSON string here, some of them escaped: ASCII only. Anything
// from 0x80 up goes as base64 rather than through a UTF-8 check: paths are bytes, and a
// name that is not UTF-8 must reach the log unchanged, not as U+FFFD.
bool plain_ascii(std::string_view v) {
  for (const char c : v) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

void append_escaped(std::string* out, std::string_view v) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (const char c : v) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(c);
    } else if (u < 0x20 || u == 0x7f) {
      // \u00XX for every control byte: one rule, and nothing that a terminal acts on.
      out->append("\\u00");
      out->push_back(kHex[u >> 4]);
      out->push_back(kHex[u & 0xf]);
    } else {
      out->push_back(c);
    }
  }
  out->push_back('"');
}

template <class T>
void append_number(std::string* out, T v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out->append(buf, r.ptr);
}

}  // namespace

EventLine::EventLine(std::string* out, std::string_view kind) : out_(out) {
  out_->append("{\"kind\":");
  append_escaped(out_, kind);
}

void EventLine::key(std::string_view k) {
  out_->push_back(',');
  append_escaped(out_, k);
  out_->push_back(':');
}

// The length append_escaped would write, quotes included.
std::size_t escaped_size(std::string_view v) {
  std::size_t n = 2;
  for (const char c : v) {
    const auto u = static_cast<unsigned char>(c);
    n += (c == '"' || c == '\\') ? 2 : (u < 0x20 || u == 0x7f) ? 6 : 1;
  }
  return n;
}

void EventLine::value_bytes(std::string_view v) {
  // The escaped form only while it is no longer than the base64 one: a name made of
  // control bytes would grow six-fold escaped, and a line the supervisor refuses as too
  // long loses its event. Base64 bounds every value at 4/3 of its bytes (plus 10).
  const std::size_t b64_size = 4 * ((v.size() + 2) / 3) + 10;
  if (plain_ascii(v) && escaped_size(v) <= b64_size) {
    append_escaped(out_, v);
    return;
  }
  out_->append("{\"b64\":\"");
  base64_append(*out_, v);
  out_->append("\"}");
}

EventLine& EventLine::bytes(std::string_view k, std::string_view value) {
  key(k);
  value_bytes(value);
  return *this;
}

EventLine& EventLine::number(std::string_view k, std::int64_t value) {
  key(k);
  append_number(out_, value);
  return *this;
}

EventLine& EventLine::unsigned_number(std::string_view k, std::uint64_t value) {
  key(k);
  append_number(out_, value);
  return *this;
}

EventLine& EventLine::boolean(std::string_view k, bool value) {
  key(k);
  out_->append(value ? "true" : "false");
  return *this;
}

EventLine& EventLine::bytes_array(std::string_view k, const std::vector<std::string>& values) {
  key(k);
  out_->push_back('[');
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out_->push_back(',');
    value_bytes(values[i]);
  }
  out_->push_back(']');
  return *this;
}

void EventLine::finish() { out_->append("}\n"); }

}  // namespace vigil::init
