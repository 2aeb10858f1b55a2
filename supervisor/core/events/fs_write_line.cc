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
  kKind = 1u << 0,
  kPid = 1u << 1,
  kSyscall = 1u << 2,
  kPath = 1u << 3,
  kFlags = 1u << 4,
  kFrom = 1u << 5,
  kFromResolved = 1u << 6,
  kResolved = 1u << 7,
  kVerdict = 1u << 8,
  kReason = 1u << 9,
  kResult = 1u << 10,
};
constexpr unsigned kRequired = kKind | kPid | kSyscall | kPath | kFlags | kResolved | kVerdict | kReason;

unsigned field_of(std::string_view key) {
  static constexpr std::pair<std::string_view, Field> kFields[] = {
      {"kind", kKind},         {"pid", kPid},         {"syscall", kSyscall},
      {"path", kPath},         {"flags", kFlags},     {"from", kFrom},
      {"from_resolved", kFromResolved}, {"resolved", kResolved}, {"verdict", kVerdict},
      {"reason", kReason},     {"result", kResult}};
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
      case kKind:
        ok = c.string(&text) && text == "fs.write";  // any other kind: the general way
        break;
      case kPid:
        ok = c.digits(&number) && number >= 1 && number <= static_cast<std::uint64_t>(detail::kMaxPid);
        w.pid = static_cast<std::int64_t>(number);
        break;
      case kSyscall:
        ok = c.string(&w.syscall) && word_ok(w.syscall);
        break;
      case kPath:
        ok = c.bytes(&w.path, &scratch) && bytes_ok(w.path, lim.max_path);
        break;
      case kFlags:
        ok = c.digits(&w.flags);
        break;
      case kFrom:
        ok = c.bytes(&w.from, &scratch) && bytes_ok(w.from, lim.max_path);
        break;
      case kFromResolved:
        ok = c.bytes(&w.from_resolved, &scratch) && bytes_ok(w.from_resolved, lim.max_path);
        break;
      case kResolved:
        ok = c.bytes(&w.resolved, &scratch) && bytes_ok(w.resolved, lim.max_path);
        break;
      case kVerdict:
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
      case kReason:
        ok = c.bytes(&w.reason, &scratch) && bytes_ok(w.reason, lim.max_text);
        break;
      case kResult:
        ok = c.string(&w.result) && word_ok(w.result);
        break;
      default:
        ok = false;
    }
    if (!ok) return std::nullopt;
  }
  if (!c.at_end() || (seen & kRequired) != kRequired) return std::nullopt;
  Body body{std::move(w)};
  if (!validate(body, lim)) return std::nullopt;
  return std::get<FsWrite>(std::move(body));
}

}  // namespace vigil::events
