#include "supervisor/core/base/bounded_json.h"

namespace vigil {
namespace {

bool is_identifier(std::string_view key) {
  if (key.empty()) return false;
  for (const char c : key) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string json_path_key(std::string_view parent, std::string_view key) {
  std::string out(parent);
  if (is_identifier(key)) {
    if (!out.empty()) out += '.';
    out += key;
  } else {
    out += "[";
    out += nlohmann::json(std::string(key)).dump();
    out += "]";
  }
  return out;
}

std::string json_path_index(std::string_view parent, std::size_t index) {
  return std::string(parent) + "[" + std::to_string(index) + "]";
}

bool BoundedJsonBuilder::key(json::string_t& k) {
  Frame& f = stack_.back();
  if (f.node->contains(k)) {
    return fail({Problem::Kind::kDuplicateKey, tracking() ? json_path_key(f.path, k) : "", 0, {}});
  }
  pending_key_ = std::move(k);
  return true;
}

bool BoundedJsonBuilder::parse_error(std::size_t position, const std::string&,
                                     const nlohmann::detail::exception& ex) {
  std::string what = ex.what();
  // nlohmann's text is "[json.exception...] parse error at line L, column C: <reason>":
  // keep the reason; callers print their own position.
  const auto colon = what.find(": ");
  if (colon != std::string::npos) what = what.substr(colon + 2);
  return fail({Problem::Kind::kSyntax, {}, position, std::move(what)});
}

BoundedJsonBuilder::json* BoundedJsonBuilder::place(json v, std::string* path) {
  if (stack_.empty()) {
    root_ = std::move(v);
    return &root_;
  }
  Frame& f = stack_.back();
  if (f.node->is_object()) {
    if (tracking()) *path = json_path_key(f.path, pending_key_);
    json& slot = (*f.node)[pending_key_];
    slot = std::move(v);
    return &slot;
  }
  if (tracking()) *path = json_path_index(f.path, f.next_index);
  ++f.next_index;
  f.node->push_back(std::move(v));
  return &f.node->back();
}

bool BoundedJsonBuilder::value(json v, Placed what) {
  std::string path;
  place(std::move(v), &path);
  if (tracking()) on_place_(path, what);
  return true;
}

bool BoundedJsonBuilder::open(json container) {
  if (static_cast<int>(stack_.size()) >= max_depth_) {
    return fail({Problem::Kind::kTooDeep, {}, 0, {}});
  }
  std::string path;
  json* slot = place(std::move(container), &path);
  if (tracking()) on_place_(path, Placed::kContainer);
  stack_.push_back(Frame{slot, std::move(path), 0});
  return true;
}

}  // namespace vigil
