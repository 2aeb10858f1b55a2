#include "supervisor/core/events/fs_write_line.h"

#include <cstdint>
#include <string>
#include <utility>

#include "supervisor/core/events/event_schema_detail.h"

namespace vigil::events {
namespace {

// A cursor over the line, reading only the strict subset (fs_write_line.h). Every reader
// returns false for anything outside it; the caller then gives up on the whole line.
class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}

  bool eat(char c) {
    if (i_ >= s_.size() || s_[i_] != c) return false;
    ++i_;
    return true;
  }
  bool eat(std::string_view lit) {
    if (s_.substr(i_, lit.size()) != lit) return false;
    i_ += lit.size();
    return true;
  }
  bool at_end() const { return i_ == s_.size(); }
  bool peek(char c) const { return i_ < s_.size() && s_[i_] == c; }

  // A JSON string, decoded. Raw bytes: 0x20-0x7f but '"' and '\\' (a control byte is not
  // JSON; from 0x80 up the general parser checks UTF-8). Escapes: the two-letter ones and
  // \u00XX below 0x80 (a code point above would be UTF-8 to encode: left to it too).
  bool string(std::string* out) {
    if (!eat('"')) return false;
    out->clear();
    for (;;) {
      const std::size_t start = i_;
      while (i_ < s_.size()) {
        const auto u = static_cast<unsigned char>(s_[i_]);
        if (u == '"' || u == '\\' || u < 0x20 || u >= 0x80) break;
        ++i_;
      }
      out->append(s_.data() + start, i_ - start);
      if (i_ >= s_.size()) return false;
      const char c = s_[i_++];
      if (c == '"') return true;
      if (c != '\\' || i_ >= s_.size()) return false;
      const char e = s_[i_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out->push_back(e);
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          if (s_.size() - i_ < 4) return false;
          int v = 0;
          for (int k = 0; k < 4; ++k) {
            const int h = hex_value(s_[i_ + static_cast<std::size_t>(k)]);
            if (h < 0) return false;
            v = v * 16 + h;
          }
          if (v >= 0x80) return false;
          i_ += 4;
          out->push_back(static_cast<char>(v));
          break;
        }
        default:
          return false;
      }
    }
  }

  // A non-negative integer in plain decimal: "0" or no leading zero, at most 19 digits
  // (below 2^64; a longer one is left to the general parser, which may read it as a
  // float). A sign, a fraction or an exponent ends the read at a byte the caller refuses.
  bool digits(std::uint64_t* out) {
    const std::size_t start = i_;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
    const std::size_t n = i_ - start;
    if (n == 0 || n > 19 || (n > 1 && s_[start] == '0')) return false;
    std::uint64_t v = 0;
    for (std::size_t k = start; k < i_; ++k) v = v * 10 + static_cast<std::uint64_t>(s_[k] - '0');
    *out = v;
    return true;
  }

  // A byte string: a string, or {"b64":"..."} holding canonical base64 (the only key).
  bool bytes(std::string* out, std::string* scratch) {
    if (peek('"')) return string(out);
    if (!eat(std::string_view("{\"b64\":")) || !string(scratch) || !eat('}')) return false;
    auto decoded = base64_decode(*scratch);
    if (!decoded) return false;
    *out = std::move(*decoded);
    return true;
  }

 private:
  static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

enum Field : unsigned {
  kSeenKind = 1u << 0,
  kSeenPid = 1u << 1,
  kSeenSyscall = 1u << 2,
  kSeenPath = 1u << 3,
  kSeenFlags = 1u << 4,
  kSeenFrom = 1u << 5,
  kSeenFromResolved = 1u << 6,
  kSeenResolved = 1u << 7,
  kSeenVerdict = 1u << 8,
  kSeenReason = 1u << 9,
  kSeenResult = 1u << 10,
};
constexpr unsigned kSeenRequired = kSeenKind | kSeenPid | kSeenSyscall | kSeenPath | kSeenFlags | kSeenResolved | kSeenVerdict | kSeenReason;

unsigned field_of(std::string_view key) {
  static constexpr std::pair<std::string_view, Field> kFields[] = {
      {"kind", kSeenKind},         {"pid", kSeenPid},         {"syscall", kSeenSyscall},
      {"path", kSeenPath},         {"flags", kSeenFlags},     {"from", kSeenFrom},
      {"from_resolved", kSeenFromResolved}, {"resolved", kSeenResolved}, {"verdict", kSeenVerdict},
      {"reason", kSeenReason},     {"result", kSeenResult}};
  for (const auto& [name, f] : kFields)
    if (name == key) return f;
  return 0;
}

// The general parser's word(): a plain string of at most 128 bytes.
bool word_ok(const std::string& s) { return s.size() <= 128; }

bool bytes_ok(const std::string& s, std::size_t max) {
  return s.size() <= max && s.find('\0') == std::string::npos;
}

}  // namespace

std::optional<FsWrite> read_fs_write_line(std::string_view line, const Limits& lim) {
  if (line.size() > lim.max_line) return std::nullopt;
  Cursor c(line);
  if (!c.eat('{')) return std::nullopt;
  FsWrite w;
  std::string key, text, scratch;
  unsigned seen = 0;
  std::uint64_t number = 0;
  for (bool first = true;; first = false) {
    if (!first && c.eat('}')) break;
    if (!first && !c.eat(',')) return std::nullopt;
    if (!c.string(&key) || !c.eat(':')) return std::nullopt;
    const unsigned f = field_of(key);
    if (f == 0 || (seen & f) != 0) return std::nullopt;  // unknown (or owned), or twice
    seen |= f;
    bool ok = true;
    switch (f) {
      case kSeenKind:
        ok = c.string(&text) && text == "fs.write";  // any other kind: the general way
        break;
      case kSeenPid:
        ok = c.digits(&number) && number >= 1 && number <= static_cast<std::uint64_t>(detail::kMaxPid);
        w.pid = static_cast<std::int64_t>(number);
        break;
      case kSeenSyscall:
        ok = c.string(&w.syscall) && word_ok(w.syscall);
        break;
      case kSeenPath:
        ok = c.bytes(&w.path, &scratch) && bytes_ok(w.path, lim.max_path);
        break;
      case kSeenFlags:
        ok = c.digits(&w.flags);
        break;
      case kSeenFrom:
        ok = c.bytes(&w.from, &scratch) && bytes_ok(w.from, lim.max_path);
        break;
      case kSeenFromResolved:
        ok = c.bytes(&w.from_resolved, &scratch) && bytes_ok(w.from_resolved, lim.max_path);
        break;
      case kSeenResolved:
        ok = c.bytes(&w.resolved, &scratch) && bytes_ok(w.resolved, lim.max_path);
        break;
      case kSeenVerdict:
        ok = c.string(&text);
        if (text == "allowed") {
          w.verdict = Verdict::kAllowed;
        } else if (text == "denied") {
          w.verdict = Verdict::kDenied;
        } else if (text == "ephemeral") {
          w.verdict = Verdict::kEphemeral;
        } else {
          ok = false;
        }
        break;
      case kSeenReason:
        ok = c.bytes(&w.reason, &scratch) && bytes_ok(w.reason, lim.max_text);
        break;
      case kSeenResult:
        ok = c.string(&w.result) && word_ok(w.result);
        break;
      default:
        ok = false;
    }
    if (!ok) return std::nullopt;
  }
  if (!c.at_end() || (seen & kSeenRequired) != kSeenRequired) return std::nullopt;
  Body body{std::move(w)};
  if (!validate(body, lim)) return std::nullopt;
  return std::get<FsWrite>(std::move(body));
}

}  // namespace vigil::events
