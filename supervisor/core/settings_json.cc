#include "supervisor/core/settings_json.h"

#include <iterator>
#include <set>
#include <vector>

namespace vigil {
namespace {

using nlohmann::json;

// An input iterator over the text that publishes how far the lexer has read, so SAX
// callbacks can tell where they are. nlohmann reads strictly forward through it.
class CountingIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  CountingIterator(const char* p, const char* base, std::size_t* consumed)
      : p_(p), base_(base), consumed_(consumed) {}
  reference operator*() const { return *p_; }
  CountingIterator& operator++() {
    ++p_;
    *consumed_ = static_cast<std::size_t>(p_ - base_);
    return *this;
  }
  CountingIterator operator++(int) {
    CountingIterator old = *this;
    ++*this;
    return old;
  }
  bool operator==(const CountingIterator& o) const { return p_ == o.p_; }
  bool operator!=(const CountingIterator& o) const { return p_ != o.p_; }

 private:
  const char* p_;
  const char* base_;
  std::size_t* consumed_;
};

bool is_identifier(std::string_view key) {
  if (key.empty()) return false;
  for (const char c : key) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// Builds the DOM like nlohmann's own SAX DOM parser, plus the offsets map and the
// duplicate-key and depth checks.
class PositionSax {
 public:
  PositionSax(SettingsJson* out, const std::size_t* consumed) : out_(out), consumed_(consumed) {}

  bool null() { return value(json(nullptr)); }
  bool boolean(bool v) { return value(json(v)); }
  bool number_integer(json::number_integer_t v) { return number(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return number(json(v)); }
  bool number_float(json::number_float_t v, const json::string_t&) { return number(json(v)); }
  bool string(json::string_t& v) { return value(json(std::move(v))); }
  bool binary(json::binary_t&) { return fail("binary values are not JSON"); }

  bool start_object(std::size_t) { return open(json::object()); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(json::string_t& k) {
    Frame& f = stack_.back();
    if (!f.keys.insert(k).second) {
      return fail("duplicate key " + json_path_key(f.path, k) +
                  " (a second value would silently replace the first)");
    }
    pending_key_ = k;
    return true;
  }

  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& ex) {
    std::string what = ex.what();
    // nlohmann's text is "[json.exception...] parse error at line L, column C: <reason>";
    // keep the reason, we print our own position.
    const auto colon = what.find(": ");
    if (colon != std::string::npos) what = what.substr(colon + 2);
    error_offset_ = position > 0 ? position - 1 : 0;
    error_ = what;
    return false;
  }

  const std::string& error() const { return error_; }
  std::size_t error_offset() const { return error_offset_; }

 private:
  struct Frame {
    json* node;
    std::string path;
    std::set<std::string> keys;
    std::size_t next_index = 0;
  };

  // The path the next value will have, and the slot it goes into.
  std::pair<std::string, json*> place(json v) {
    if (stack_.empty()) {
      out_->root = std::move(v);
      return {"", &out_->root};
    }
    Frame& f = stack_.back();
    if (f.node->is_object()) {
      json& slot = (*f.node)[pending_key_];
      slot = std::move(v);
      return {json_path_key(f.path, pending_key_), &slot};
    }
    f.node->push_back(std::move(v));
    return {json_path_index(f.path, f.next_index++), &f.node->back()};
  }

  bool value(json v, std::size_t end) {
    auto [path, slot] = place(std::move(v));
    out_->offsets[path] = end;
    return true;
  }
  bool value(json v) { return value(std::move(v), *consumed_); }

  // The lexer finds the end of a number by reading one character past it (unless the
  // text ends there); do not count that character, or a position points past the value.
  bool number(json v) {
    std::size_t end = *consumed_;
    if (end > 0 && end <= out_->text.size() &&
        std::string_view("0123456789+-.eE").find(out_->text[end - 1]) == std::string_view::npos) {
      --end;
    }
    return value(std::move(v), end);
  }

  bool open(json container) {
    if (static_cast<int>(stack_.size()) >= kMaxSettingsDepth) {
      return fail("nesting deeper than " + std::to_string(kMaxSettingsDepth) + " levels");
    }
    auto [path, slot] = place(std::move(container));
    out_->offsets[path] = *consumed_;
    stack_.push_back(Frame{slot, path, {}, 0});
    return true;
  }

  bool close() {
    stack_.pop_back();
    return true;
  }

  bool fail(std::string what) {
    error_ = std::move(what);
    error_offset_ = *consumed_ > 0 ? *consumed_ - 1 : 0;
    return false;
  }

  SettingsJson* out_;
  const std::size_t* consumed_;
  std::vector<Frame> stack_;
  std::string pending_key_;
  std::string error_;
  std::size_t error_offset_ = 0;
};

}  // namespace

std::string line_column(std::string_view text, std::size_t offset) {
  std::size_t line = 1;
  std::size_t col = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(col);
}

std::string json_path_key(std::string_view parent, std::string_view key) {
  std::string out(parent);
  if (is_identifier(key)) {
    if (!out.empty()) out += '.';
    out += key;
  } else {
    out += "[";
    out += json(std::string(key)).dump();  // JSON-escaped, so control bytes stay visible
    out += "]";
  }
  return out;
}

std::string json_path_index(std::string_view parent, std::size_t index) {
  return std::string(parent) + "[" + std::to_string(index) + "]";
}

Result<SettingsJson> parse_settings_json(std::string text, std::string_view source) {
  if (text.size() > kMaxSettingsBytes) {
    return make_error(Errc::kInvalidPolicy, std::string(source) + ": larger than " +
                                                std::to_string(kMaxSettingsBytes) +
                                                " bytes; not a settings file");
  }
  SettingsJson out;
  out.text = std::move(text);
  std::size_t consumed = 0;
  PositionSax sax(&out, &consumed);
  const char* base = out.text.data();
  const bool ok = json::sax_parse(CountingIterator(base, base, &consumed),
                                  CountingIterator(base + out.text.size(), base, &consumed), &sax,
                                  json::input_format_t::json, /*strict=*/true,
                                  /*ignore_comments=*/false);
  if (!ok) {
    return make_error(Errc::kInvalidPolicy, std::string(source) + ": " +
                                                line_column(out.text, sax.error_offset()) + ": " +
                                                sax.error());
  }
  return out;
}

}  // namespace vigil
