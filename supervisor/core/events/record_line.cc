#include "supervisor/core/events/record_line.h"

#include <string_view>

namespace vigil::events {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void put_u16(std::string& out, unsigned cp) {
  out += "\\u";
  out += kHex[(cp >> 12) & 15];
  out += kHex[(cp >> 8) & 15];
  out += kHex[(cp >> 4) & 15];
  out += kHex[cp & 15];
}

// A JSON string of valid UTF-8 `s`, ASCII only, escaped as the log's JSON library escapes
// it: the two-letter escapes where JSON has one, \u00XX for other control bytes and DEL,
// \uXXXX for every other non-ASCII character (a surrogate pair above U+FFFF).
void put_text(std::string& out, std::string_view s) {
  out += '"';
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
          if (c < 0x20 || c == 0x7f) {
            put_u16(out, c);
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    std::size_t n = 2;
    unsigned cp = c & 0x1fu;
    if (c >= 0xf0) {
      n = 4;
      cp = c & 0x07u;
    } else if (c >= 0xe0) {
      n = 3;
      cp = c & 0x0fu;
    }
    for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3fu);
    i += n;
    if (cp <= 0xffff) {
      put_u16(out, cp);
    } else {
      cp -= 0x10000;
      put_u16(out, 0xd800 + (cp >> 10));
      put_u16(out, 0xdc00 + (cp & 0x3ff));
    }
  }
  out += '"';
}

// A bytes field: text when it is UTF-8, else {"b64":"..."} (the schema's byte strings).
void put_bytes(std::string& out, const std::string& s) {
  if (is_valid_utf8(s)) {
    put_text(out, s);
    return;
  }
  out += "{\"b64\":\"";
  out += base64_encode(s);
  out += "\"}";
}

void key(std::string& out, std::string_view k) {
  out += ",\"";
  out += k;
  out += "\":";
}

}  // namespace

std::optional<std::string> serialize_fast(const Event& e) {
  const auto* w = std::get_if<FsWrite>(&e.body);
  if (w == nullptr) return std::nullopt;
  for (const std::string* plain : {&e.session, &e.prev, &w->syscall, &w->result})
    if (!is_valid_utf8(*plain)) return std::nullopt;
  std::string out;
  out.reserve(256 + w->path.size() + w->resolved.size() + w->reason.size() + w->from.size() +
              w->from_resolved.size());
  out += "{\"v\":";
  out += std::to_string(kSchemaVersion);
  key(out, "seq");
  out += std::to_string(e.seq);
  key(out, "t");
  out += std::to_string(e.t);
  key(out, "session");
  put_text(out, e.session);
  key(out, "src");
  put_text(out, to_string(e.src));
  if (e.cmd) {
    key(out, "cmd");
    out += std::to_string(*e.cmd);
  }
  key(out, "kind");
  put_text(out, to_string(e.kind()));
  key(out, "pid");
  out += std::to_string(w->pid);
  key(out, "syscall");
  put_text(out, w->syscall);
  key(out, "path");
  put_bytes(out, w->path);
  key(out, "resolved");
  put_bytes(out, w->resolved);
  key(out, "flags");
  out += std::to_string(w->flags);
  key(out, "verdict");
  put_text(out, to_string(w->verdict));
  key(out, "reason");
  put_bytes(out, w->reason);
  const std::pair<std::string_view, const std::string*> optional[] = {
      {"from", &w->from}, {"from_resolved", &w->from_resolved}, {"unguarded", &w->unguarded}};
  for (const auto& [k, v] : optional) {
    if (v->empty()) continue;
    key(out, k);
    put_bytes(out, *v);
  }
  if (!w->result.empty()) {
    key(out, "result");
    put_text(out, w->result);
  }
  if (!w->ignored.empty()) {
    key(out, "ignored");
    put_bytes(out, w->ignored);
  }
  if (!w->rule_id.empty()) {
    key(out, "rule_id");
    put_bytes(out, w->rule_id);
  }
  key(out, "prev");
  put_text(out, e.prev);
  out += '}';
  return out;
}

}  // namespace vigil::events
