// The event schema's parsers: a log record (parse_log_record) and an untrusted line from
// inside the sandbox (parse_untrusted_event_line), each read by the field reader
// (event_reader.h) and then validated (event_validate.cc).
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "supervisor/core/base/bounded_json.h"
#include "supervisor/core/events/event_reader.h"
#include "supervisor/core/events/event_schema.h"
#include "supervisor/core/events/event_schema_detail.h"
#include "supervisor/core/events/fs_write_line.h"

namespace vigil::events {
namespace {

using detail::is_hex64;
using detail::is_token;
using detail::json;
using detail::quote_key;
using detail::FieldReader;
using detail::Reader;

Result<json> parse_bounded(std::string_view line, int max_depth) {
  // Bounded nesting, duplicate keys refused (supervisor/core/base/bounded_json.h).
  BoundedJsonBuilder dom(max_depth);
  bool ok = false;
  try {
    ok = sax_parse_json_text(line.begin(), line.end(), &dom);
  } catch (const std::exception&) {
    // nlohmann reports syntax errors through parse_error(); anything thrown is an
    // allocation failure or a bug. Either way: a value, not a crash.
    ok = false;
  }
  if (!ok) {
    using K = BoundedJsonBuilder::Problem::Kind;
    switch (dom.problem().kind) {
      case K::kTooDeep:
        return make_error(Errc::kInvalidPolicy, "nested too deeply");
      case K::kDuplicateKey:
        return make_error(Errc::kInvalidPolicy, "duplicate key");
      case K::kBinary:
        return make_error(Errc::kInvalidPolicy, "binary value");
      case K::kSyntax:
      case K::kNone:
        break;
    }
    return make_error(Errc::kInvalidPolicy, "not valid JSON");
  }
  if (!dom.root().is_object()) return make_error(Errc::kInvalidPolicy, "not a JSON object");
  return std::move(dom.root());
}

std::optional<Source> source_from(std::string_view s) {
  if (s == "observer") return Source::kObserver;
  if (s == "proxy") return Source::kProxy;
  if (s == "supervisor") return Source::kSupervisor;
  return std::nullopt;
}

// Parses, then checks what only the value can show (bounds, vocabularies).
Result<Body> finish_body(Kind kind, Reader& r, const Limits& lim) {
  FieldReader fields(r, kind, lim);
  Result<Body> body = detail::read_body(kind, fields, lim);
  VIGIL_TRY_VOID(r.finish());
  VIGIL_TRY_VOID(validate(*body, lim));
  return body;
}

}  // namespace

Result<Body> parse_untrusted_event_line(std::string_view line, const Limits& lim) {
  // The observer's fs.write lines, most of what it sends, read without a document: the
  // same record, or nullopt and the general way below (fs_write_line.h).
  if (auto w = read_fs_write_line(line, lim)) return Body{std::move(*w)};
  return detail::parse_untrusted_event_line_general(line, lim);
}

Result<Body> detail::parse_untrusted_event_line_general(std::string_view line,
                                                        const Limits& lim) {
  if (line.size() > lim.max_line)
    return make_error(Errc::kInvalidPolicy, "line longer than the limit");
  auto parsed = parse_bounded(line, lim.max_depth);
  VIGIL_TRY(parsed);
  const json& obj = *parsed;
  // The envelope is the supervisor's: a sandbox that sets it is trying to place its
  // event somewhere in the record it does not own.
  for (const char* owned : {"seq", "t", "session", "prev", "src", "cmd"}) {
    if (obj.contains(owned)) {
      return make_error(Errc::kRefused,
                        std::string("forged: sets the supervisor-owned field ") + owned);
    }
  }
  Reader r(obj);
  if (r.has("v")) {
    if (r.integer("v", 0, 1 << 30) != kSchemaVersion || r.failed()) {
      return make_error(Errc::kUnsupported, "schema version other than 1");
    }
  }
  const std::string kind_name = r.word("kind");
  if (r.failed()) return std::move(r.finish()).error();
  const auto kind = kind_from_string(kind_name);
  if (!kind) return make_error(Errc::kUnsupported, "unknown kind " + quote_key(kind_name));
  // fs.image: pre-images only; post-images are the supervisor's own.
  const bool pre_image = *kind == Kind::kFsImage && obj.contains("phase") &&
                         obj["phase"].is_string() && obj["phase"] == "pre";
  if (*kind != Kind::kProcExec && *kind != Kind::kFsWrite && *kind != Kind::kObserverStats &&
      *kind != Kind::kFsRead && *kind != Kind::kNetUnix && !pre_image) {
    return make_error(Errc::kRefused,
                      std::string("forged: the observer never sends ") + to_string(*kind));
  }
  return finish_body(*kind, r, lim);
}

LineFault fault_of(const Error& e) {
  switch (e.code) {
    case Errc::kRefused:
      return LineFault::kForged;
    case Errc::kUnsupported:
      return LineFault::kUnsupported;
    default:
      return LineFault::kMalformed;
  }
}

Result<Event> parse_log_record(std::string_view line, const Limits& lim) {
  if (line.size() > lim.max_line)
    return make_error(Errc::kInvalidPolicy, "record longer than the limit");
  auto parsed = parse_bounded(line, lim.max_depth);
  VIGIL_TRY(parsed);
  Reader r(*parsed);
  if (r.integer("v", 0, 1 << 30) != kSchemaVersion && !r.failed()) {
    return make_error(Errc::kUnsupported, "schema version other than 1");
  }
  Event e;
  e.seq = r.count("seq");
  e.t = r.count("t");
  e.session = r.word("session");
  const std::string src = r.word("src");
  if (r.has("cmd")) e.cmd = r.count("cmd");
  const std::string kind_name = r.word("kind");
  e.prev = r.word("prev");
  if (r.failed()) return std::move(r.finish()).error();
  if (!is_token(e.session, 64))
    return make_error(Errc::kInvalidPolicy, "session: not a session id");
  if (!is_hex64(e.prev))
    return make_error(Errc::kInvalidPolicy, "prev: expected 64 lower-case hex digits");
  const auto s = source_from(src);
  if (!s) return make_error(Errc::kInvalidPolicy, "src: expected observer, proxy or supervisor");
  e.src = *s;
  const auto kind = kind_from_string(kind_name);
  if (!kind) return make_error(Errc::kUnsupported, "unknown kind " + quote_key(kind_name));
  auto body = finish_body(*kind, r, lim);
  VIGIL_TRY(body);
  e.body = std::move(*body);
  if (serialize(e) != line && serialize_as(e, /*legacy=*/true) != line) {
    return make_error(Errc::kInvalidPolicy,
                      "not in canonical form (the line was not written by vigil as it is)");
  }
  return e;
}

}  // namespace vigil::events
