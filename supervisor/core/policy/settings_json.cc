#include "supervisor/core/policy/settings_json.h"

#include <iterator>

#include "supervisor/core/base/bounded_json.h"

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

Result<SettingsJson> parse_settings_json(std::string text, std::string_view source) {
  if (text.size() > kMaxSettingsBytes) {
    return make_error(Errc::kInvalidPolicy, std::string(source) + ": larger than " +
                                                std::to_string(kMaxSettingsBytes) +
                                                " bytes; not a settings file");
  }
  SettingsJson out;
  out.text = std::move(text);
  std::size_t consumed = 0;
  // Each value's offset: just past its first token. The lexer finds the end of a number
  // by reading one character past it (unless the text ends there): that character is not
  // the number's, or a position would point past the value.
  auto on_place = [&](const std::string& path, BoundedJsonBuilder::Placed what) {
    std::size_t end = consumed;
    if (what == BoundedJsonBuilder::Placed::kNumber && end > 0 && end <= out.text.size() &&
        std::string_view("0123456789+-.eE").find(out.text[end - 1]) == std::string_view::npos) {
      --end;
    }
    out.offsets[path] = end;
  };
  BoundedJsonBuilder builder(kMaxSettingsDepth, on_place);
  const char* base = out.text.data();
  const bool ok = sax_parse_json_text(CountingIterator(base, base, &consumed),
                                      CountingIterator(base + out.text.size(), base, &consumed),
                                      &builder, /*strict=*/true);
  if (!ok) {
    // The parser stops at the first callback that refuses, so `consumed` is where the
    // problem is; a syntax error brings its own position.
    const auto& p = builder.problem();
    std::size_t at = consumed > 0 ? consumed - 1 : 0;
    std::string what;
    switch (p.kind) {
      case BoundedJsonBuilder::Problem::Kind::kSyntax:
        at = p.position > 0 ? p.position - 1 : 0;
        what = p.syntax_message;
        break;
      case BoundedJsonBuilder::Problem::Kind::kTooDeep:
        what = "nesting deeper than " + std::to_string(kMaxSettingsDepth) + " levels";
        break;
      case BoundedJsonBuilder::Problem::Kind::kDuplicateKey:
        what = "duplicate key " + p.path + " (a second value would silently replace the first)";
        break;
      case BoundedJsonBuilder::Problem::Kind::kBinary:
      case BoundedJsonBuilder::Problem::Kind::kNone:
        what = "not a JSON text";
        break;
    }
    return make_error(Errc::kInvalidPolicy,
                      std::string(source) + ": " + line_column(out.text, at) + ": " + what);
  }
  out.root = std::move(builder.root());
  return out;
}

}  // namespace vigil
