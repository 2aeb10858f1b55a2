// The one JSON DOM builder for text vigil did not write itself (settings files, event
// lines from the sandbox, session logs read back): nlohmann's SAX interface, building the
// DOM here so that
//   - nesting is bounded (a deep document would otherwise cost stack, in the parser and in
//     the DOM's recursive destructor), and
//   - a duplicate key is an error: with last-one-wins, {"verdict":"denied",
//     "verdict":"allowed"} reads differently to different parsers, and a second
//     "allowWrite" would silently replace the first.
// Optionally it tracks each value's JSON path (for settings errors that say where).
#pragma once

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vigil {

// Appends a key to a JSON path: identifiers with '.', others with ["..."] (JSON-escaped,
// so control bytes stay visible).
std::string json_path_key(std::string_view parent, std::string_view key);
std::string json_path_index(std::string_view parent, std::size_t index);

class BoundedJsonBuilder {
 public:
  using json = nlohmann::json;
  enum class Placed { kScalar, kNumber, kContainer };
  // Called with each value's JSON path as it is placed ("" for the root); when set, paths
  // are tracked (and problems carry the path).
  using OnPlace = std::function<void(const std::string& path, Placed what)>;

  struct Problem {
    enum class Kind { kNone, kSyntax, kTooDeep, kDuplicateKey, kBinary };
    Kind kind = Kind::kNone;
    std::string path;            // kDuplicateKey: the repeated key's path (tracked paths only)
    std::size_t position = 0;    // kSyntax: nlohmann's byte position
    std::string syntax_message;  // kSyntax: nlohmann's reason, without its own position
  };

  explicit BoundedJsonBuilder(int max_depth, OnPlace on_place = {})
      : max_depth_(max_depth), on_place_(std::move(on_place)) {}

  // nlohmann's SAX interface.
  bool null() { return value(json(nullptr), Placed::kScalar); }
  bool boolean(bool v) { return value(json(v), Placed::kScalar); }
  bool number_integer(json::number_integer_t v) { return value(json(v), Placed::kNumber); }
  bool number_unsigned(json::number_unsigned_t v) { return value(json(v), Placed::kNumber); }
  bool number_float(json::number_float_t v, const json::string_t&) {
    return value(json(v), Placed::kNumber);
  }
  bool string(json::string_t& v) { return value(json(std::move(v)), Placed::kScalar); }
  bool binary(json::binary_t&) { return fail({Problem::Kind::kBinary, {}, 0, {}}); }
  bool start_object(std::size_t) { return open(json::object()); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(json::string_t& k);
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex);

  json& root() { return root_; }
  int max_depth() const { return max_depth_; }
  // The first problem met; kNone after a successful parse.
  const Problem& problem() const { return problem_; }

 private:
  struct Frame {
    json* node;
    std::string path;  // tracked paths only
    std::size_t next_index = 0;
  };
  // The slot the next value goes into, and its path when tracked.
  json* place(json v, std::string* path);
  bool value(json v, Placed what);
  bool open(json container);
  bool close() {
    stack_.pop_back();
    return true;
  }
  bool fail(Problem p) {
    if (problem_.kind == Problem::Kind::kNone) problem_ = std::move(p);
    return false;
  }
  bool tracking() const { return static_cast<bool>(on_place_); }

  int max_depth_;
  OnPlace on_place_;
  json root_;
  std::vector<Frame> stack_;
  std::string pending_key_;
  Problem problem_;
};

// Parses the JSON text [first, last) into `sax`: what json::sax_parse(first, last, sax,
// input_format_t::json, strict, false) does, minus its other branch. sax_parse takes the
// input format at run time, so every call also instantiates nlohmann's CBOR, MessagePack,
// UBJSON and BSON readers, which call ldexp(); that one reference binds libm.so into
// `vigil`, one more library for the loader to find, map and relocate on every start (vigil
// uses nothing else of libm). nlohmann's own parse() and accept() build the same parser.
template <class Iterator, class Sax>
bool sax_parse_json_text(Iterator first, Iterator last, Sax* sax, bool strict = true) {
  auto input = nlohmann::detail::input_adapter(std::move(first), std::move(last));
  return nlohmann::detail::parser<nlohmann::json, decltype(input)>(
             std::move(input), nullptr, /*allow_exceptions_=*/true, /*skip_comments=*/false)
      .sax_parse(sax, strict);
}

}  // namespace vigil
