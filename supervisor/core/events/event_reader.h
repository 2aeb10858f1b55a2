// The field reader of the event schema's parser (event_read.cc): reads the fields of one
// JSON object with their types and bounds (Reader), a kind's fields by their row of the
// field table (FieldReader). Not part of the schema's interface.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "supervisor/core/events/event_fields.h"
#include "supervisor/core/events/event_schema.h"

namespace vigil::events::detail {

using json = nlohmann::json;  // parsing: order does not matter

// A bounded, one-line rendering of a key the sandbox chose, for an error message.
inline std::string quote_key(std::string_view key) {
  std::string k(key.substr(0, 40));
  std::string out = "\"" + escape_for_terminal(k) + "\"";
  if (key.size() > 40) out += "...";
  return out;
}

// Reads the fields of one JSON object. The first problem is kept and later reads return
// defaults, so a kind's parser is a straight list of reads followed by finish().
class Reader {
 public:
  explicit Reader(const json& obj) : obj_(obj) {}

  bool has(const char* key) const { return obj_.contains(key); }
  bool failed() const { return err_.has_value(); }

  void fail(Errc code, std::string why) {
    if (!err_) err_ = make_error(code, std::move(why));
  }

  // A byte string: a JSON string, or {"b64": "..."}.
  std::string bytes(const char* key, std::size_t max, bool required = true,
                    bool allow_nul = false) {
    const json* v = take(key, required);
    if (v == nullptr) return {};
    std::string out;
    if (v->is_string()) {
      out = v->get_ref<const std::string&>();
    } else if (v->is_object() && v->size() == 1 && v->contains("b64") && (*v)["b64"].is_string()) {
      auto decoded = base64_decode((*v)["b64"].get_ref<const std::string&>());
      if (!decoded) {
        fail(Errc::kInvalidPolicy, std::string(key) + ": b64 is not valid base64");
        return {};
      }
      out = std::move(*decoded);
    } else {
      fail(Errc::kInvalidPolicy, std::string(key) + ": expected a string or {\"b64\": ...}");
      return {};
    }
    check_bytes(key, out, max, allow_nul);
    return out;
  }

  std::vector<std::string> bytes_array(const char* key, std::size_t max_entries,
                                       std::size_t max_each) {
    const json* v = take(key, true);
    if (v == nullptr) return {};
    if (!v->is_array()) {
      fail(Errc::kInvalidPolicy, std::string(key) + ": expected an array");
      return {};
    }
    if (v->size() > max_entries) {
      fail(Errc::kInvalidPolicy,
           std::string(key) + ": more than " + std::to_string(max_entries) + " entries");
      return {};
    }
    std::vector<std::string> out;
    out.reserve(v->size());
    for (const auto& e : *v) {
      std::string s;
      if (e.is_string()) {
        s = e.get_ref<const std::string&>();
      } else if (e.is_object() && e.size() == 1 && e.contains("b64") && e["b64"].is_string()) {
        auto decoded = base64_decode(e["b64"].get_ref<const std::string&>());
        if (!decoded) {
          fail(Errc::kInvalidPolicy, std::string(key) + ": an entry's b64 is not valid base64");
          return {};
        }
        s = std::move(*decoded);
      } else {
        fail(Errc::kInvalidPolicy,
             std::string(key) + ": entries must be strings or {\"b64\": ...}");
        return {};
      }
      if (!check_bytes(key, s, max_each, false)) return {};
      out.push_back(std::move(s));
    }
    return out;
  }

  // A plain JSON string from a closed vocabulary (kind, verdict, proto, ...).
  std::string word(const char* key, bool required = true) {
    const json* v = take(key, required);
    if (v == nullptr) return {};
    if (!v->is_string()) {
      fail(Errc::kInvalidPolicy, std::string(key) + ": expected a string");
      return {};
    }
    const auto& s = v->get_ref<const std::string&>();
    if (s.size() > 128) {
      fail(Errc::kInvalidPolicy, std::string(key) + ": too long");
      return {};
    }
    return s;
  }

  std::int64_t integer(const char* key, std::int64_t lo, std::int64_t hi, bool required = true) {
    const json* v = take(key, required);
    if (v == nullptr) return 0;
    std::int64_t n = 0;
    if (v->is_number_unsigned()) {
      const auto u = v->get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(hi)) return range(key, lo, hi);
      n = static_cast<std::int64_t>(u);
    } else if (v->is_number_integer()) {
      n = v->get<std::int64_t>();
    } else {
      fail(Errc::kInvalidPolicy, std::string(key) + ": expected an integer");
      return 0;
    }
    if (n < lo || n > hi) return range(key, lo, hi);
    return n;
  }

  std::uint64_t count(const char* key, bool required = true) {
    const json* v = take(key, required);
    if (v == nullptr) return 0;
    if (!v->is_number_unsigned() && !(v->is_number_integer() && v->get<std::int64_t>() >= 0)) {
      fail(Errc::kInvalidPolicy, std::string(key) + ": expected a non-negative integer");
      return 0;
    }
    return v->get<std::uint64_t>();
  }

  bool boolean(const char* key) {
    const json* v = take(key, false);
    if (v == nullptr) return false;
    if (!v->is_boolean()) {
      fail(Errc::kInvalidPolicy, std::string(key) + ": expected true or false");
      return false;
    }
    return v->get<bool>();
  }

  const json* object(const char* key, bool required = true) {
    const json* v = take(key, required);
    if (v == nullptr) return nullptr;
    if (!v->is_object()) {
      fail(Errc::kInvalidPolicy, std::string(key) + ": expected an object");
      return nullptr;
    }
    return v;
  }

  // Every key must have been read: an unknown field is malformed, not ignored (a field
  // we do not know is a field we cannot validate).
  Result<void> finish() {
    if (err_) return *err_;
    for (auto it = obj_.begin(); it != obj_.end(); ++it) {
      if (seen_.count(it.key()) == 0) {
        return make_error(Errc::kInvalidPolicy, "unknown field " + quote_key(it.key()));
      }
    }
    return {};
  }

  void mark(const char* key) { seen_.insert(key); }

 private:
  const json* take(const char* key, bool required) {
    if (err_) return nullptr;
    seen_.insert(key);
    auto it = obj_.find(key);
    if (it == obj_.end()) {
      if (required) fail(Errc::kInvalidPolicy, std::string("missing field ") + key);
      return nullptr;
    }
    return &*it;
  }
  std::int64_t range(const char* key, std::int64_t lo, std::int64_t hi) {
    fail(Errc::kInvalidPolicy, std::string(key) + ": out of range [" + std::to_string(lo) + ", " +
                                   std::to_string(hi) + "]");
    return 0;
  }
  bool check_bytes(const char* key, const std::string& s, std::size_t max, bool allow_nul) {
    if (s.size() > max) {
      fail(Errc::kInvalidPolicy,
           std::string(key) + ": longer than " + std::to_string(max) + " bytes");
      return false;
    }
    if (!allow_nul && s.find('\0') != std::string::npos) {
      fail(Errc::kInvalidPolicy, std::string(key) + ": contains a NUL byte");
      return false;
    }
    return true;
  }

  const json& obj_;
  std::set<std::string> seen_;
  std::optional<Error> err_;
};

// Reads one kind's fields by name, each with the type, presence and bound its row of the
// field table (event_fields.h) gives: a kind's reader says only which member a field
// fills. A name that is not in the kind's row, or read as another type, fails (kInternal):
// the table is the one list of a kind's fields.
class FieldReader {
 public:
  FieldReader(Reader& r, Kind kind, const Limits& lim) : r_(r), kind_(kind), lim_(lim) {}

  Reader& raw() { return r_; }
  bool failed() const { return r_.failed(); }
  void fail(Errc code, std::string why) { r_.fail(code, std::move(why)); }

  std::string bytes(std::string_view name) {
    const FieldSpec* f = spec(name, FieldType::kBytes, FieldType::kData);
    if (f == nullptr) return {};
    return r_.bytes(f->name.data(), bound_size(f->bound, lim_), required(*f),
                    f->type == FieldType::kData);
  }
  std::vector<std::string> bytes_array(std::string_view name) {
    const FieldSpec* f = spec(name, FieldType::kBytesArray, FieldType::kBytesArray);
    if (f == nullptr) return {};
    if (!required(*f) && !r_.has(f->name.data())) {
      r_.mark(f->name.data());
      return {};
    }
    return r_.bytes_array(f->name.data(), lim_.max_argv, bound_size(f->bound, lim_));
  }
  std::string word(std::string_view name) {
    const FieldSpec* f = spec(name, FieldType::kWord, FieldType::kWord);
    return f == nullptr ? std::string() : r_.word(f->name.data(), required(*f));
  }
  std::int64_t integer(std::string_view name) {
    const FieldSpec* f = spec(name, FieldType::kInteger, FieldType::kInteger);
    return f == nullptr ? 0 : r_.integer(f->name.data(), f->lo, f->hi, required(*f));
  }
  std::uint64_t count(std::string_view name) {
    const FieldSpec* f = spec(name, FieldType::kCount, FieldType::kCount);
    return f == nullptr ? 0 : r_.count(f->name.data(), required(*f));
  }
  bool boolean(std::string_view name) {
    const FieldSpec* f = spec(name, FieldType::kBoolean, FieldType::kBoolean);
    return f != nullptr && r_.boolean(f->name.data());
  }
  const json* object(std::string_view name) {
    const FieldSpec* f = spec(name, FieldType::kObject, FieldType::kObject);
    return f == nullptr ? nullptr : r_.object(f->name.data(), required(*f));
  }

 private:
  static bool required(const FieldSpec& f) { return f.presence == Presence::kRequired; }
  const FieldSpec* spec(std::string_view name, FieldType a, FieldType b) {
    const FieldSpec* f = field_of(kind_, name);
    if (f == nullptr || (f->type != a && f->type != b)) {
      r_.fail(Errc::kInternal, std::string(to_string(kind_)) + "." + std::string(name) +
                                   ": not read as its field table row says");
      return nullptr;
    }
    return f;
  }

  Reader& r_;
  Kind kind_;
  const Limits& lim_;
};

// The body of one record of `kind`, read by its row of the field table
// (event_read_kinds.cc); the caller finishes the Reader (unknown fields) and validates.
Body read_body(Kind kind, FieldReader& r, const Limits& lim);

}  // namespace vigil::events::detail
