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
using detail::kMaxPid;
using detail::quote_key;
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

std::optional<Verdict> fs_verdict_from(std::string_view s) {
  if (s == "allowed") return Verdict::kAllowed;
  if (s == "denied") return Verdict::kDenied;
  if (s == "ephemeral") return Verdict::kEphemeral;
  return std::nullopt;
}
std::optional<NetVerdict> net_verdict_from(std::string_view s) {
  if (s == "allowed") return NetVerdict::kAllowed;
  if (s == "denied") return NetVerdict::kDenied;
  return std::nullopt;
}
std::optional<NetProto> proto_from(std::string_view s) {
  if (s == "http") return NetProto::kHttp;
  if (s == "connect") return NetProto::kConnect;
  if (s == "socks5") return NetProto::kSocks5;
  if (s == "socks4") return NetProto::kSocks4;
  return std::nullopt;
}
std::optional<Source> source_from(std::string_view s) {
  if (s == "observer") return Source::kObserver;
  if (s == "proxy") return Source::kProxy;
  if (s == "supervisor") return Source::kSupervisor;
  return std::nullopt;
}

// session.end and command.end: exit_code or signal, duration_ns, counters.
template <class Ending>
void read_ending(Reader& r, const Limits& lim, Ending& b) {
  if (r.has("exit_code")) b.exit_code = static_cast<int>(r.integer("exit_code", 0, 255));
  if (r.has("signal")) b.signal = static_cast<int>(r.integer("signal", 1, 64));
  r.mark("exit_code");
  r.mark("signal");
  b.duration_ns = r.count("duration_ns");
  if (const json* c = r.object("counters")) {
    if (c->size() > lim.max_counters) {
      r.fail(Errc::kInvalidPolicy, "counters: too many entries");
    } else {
      for (auto it = c->begin(); it != c->end(); ++it) {
        if (!is_token(it.key(), 64)) {
          r.fail(Errc::kInvalidPolicy, "counters: bad name " + quote_key(it.key()));
          break;
        }
        if (!it->is_number_unsigned() &&
            !(it->is_number_integer() && it->get<std::int64_t>() >= 0)) {
          r.fail(Errc::kInvalidPolicy, "counters: values must be non-negative integers");
          break;
        }
        b.counters[it.key()] = it->get<std::uint64_t>();
      }
    }
  }
  if (!r.failed() && b.exit_code.has_value() == b.signal.has_value()) {
    r.fail(Errc::kInvalidPolicy, "exactly one of exit_code and signal");
  }
}

// One reader per big kind; read_body() dispatches.
Result<Body> read_session_start(Reader& r, const Limits& lim) {
  SessionStart b;
  b.argv = r.bytes_array("argv", lim.max_argv, lim.max_arg);
  b.cwd = r.bytes("cwd", lim.max_path);
  b.backend = r.word("backend");
  b.policy_digest = r.word("policy_digest");
  if (const json* v = r.object("versions")) {
    Reader vr(*v);
    b.versions.vigil = vr.bytes("vigil", lim.max_text);
    b.versions.bwrap = vr.bytes("bwrap", lim.max_text);
    b.versions.kernel = vr.bytes("kernel", lim.max_text);
    if (auto done = vr.finish(); !done)
      r.fail(done.error().code, "versions." + done.error().message);
  }
  b.log = r.bytes("log", lim.max_path, false);
  b.key_id = r.word("key_id", false);
  b.witness = r.word("witness", false);
  if (const json* v = r.object("scope", false)) {
    Reader sr(*v);
    HostScope scope;
    scope.writable = sr.bytes_array("writable", lim.max_argv, lim.max_path);
    scope.sandbox_own = sr.bytes_array("sandbox_own", lim.max_argv, lim.max_path);
    if (auto done = sr.finish(); !done)
      r.fail(done.error().code, "scope." + done.error().message);
    b.scope = std::move(scope);
  }
  return Body{std::move(b)};
}

Result<Body> read_fs_write(Reader& r, const Limits& lim) {
  FsWrite b;
  b.pid = r.integer("pid", 1, kMaxPid);
  b.syscall = r.word("syscall");
  b.path = r.bytes("path", lim.max_path);
  b.resolved = r.bytes("resolved", lim.max_path);
  b.flags = r.count("flags");
  const std::string verdict = r.word("verdict");
  b.reason = r.bytes("reason", lim.max_text);
  b.from = r.bytes("from", lim.max_path, false);
  b.from_resolved = r.bytes("from_resolved", lim.max_path, false);
  b.unguarded = r.bytes("unguarded", lim.max_text, false);
  b.result = r.word("result", false);
  b.ignored = r.bytes("ignored", lim.max_text, false);
  b.rule_id = r.bytes("rule_id", lim.max_text, false);
  if (!r.failed()) {
    if (auto v = fs_verdict_from(verdict)) {
      b.verdict = *v;
    } else {
      r.fail(Errc::kInvalidPolicy, "verdict: expected allowed, denied or ephemeral");
    }
  }
  return Body{std::move(b)};
}

Result<Body> read_net_decision(Reader& r, const Limits& lim) {
  NetDecision b;
  const std::string proto = r.word("proto");
  b.host = r.bytes("host", lim.max_text);
  b.port = static_cast<std::uint16_t>(r.integer("port", 0, 65535));
  const std::string verdict = r.word("verdict");
  b.rule = r.bytes("rule", lim.max_text);
  b.reason = r.bytes("reason", lim.max_text);
  b.refused_by = r.bytes("refused_by", lim.max_text, false);
  b.address = r.bytes("address", lim.max_text, false);
  b.guard_check = r.bytes("guard_check", lim.max_text, false);
  b.ignored = r.bytes("ignored", lim.max_text, false);
  b.rule_id = r.bytes("rule_id", lim.max_text, false);
  b.captured = r.boolean("captured");
  b.program = r.bytes("program", lim.max_text, false);
  if (!r.failed()) {
    auto p = proto_from(proto);
    auto v = net_verdict_from(verdict);
    if (!p) r.fail(Errc::kInvalidPolicy, "proto: expected http, connect, socks5 or socks4");
    if (!v) r.fail(Errc::kInvalidPolicy, "verdict: expected allowed or denied");
    if (p && v) {
      b.proto = *p;
      b.verdict = *v;
    }
  }
  return Body{std::move(b)};
}

Result<Body> read_net_upstream_failure(Reader& r, const Limits& lim) {
  NetUpstreamFailure b;
  const std::string proto = r.word("proto");
  b.host = r.bytes("host", lim.max_text);
  b.port = static_cast<std::uint16_t>(r.integer("port", 0, 65535));
  b.address = r.bytes("address", lim.max_text, false);
  b.what = r.bytes("what", lim.max_text);
  if (!r.failed()) {
    if (auto p = proto_from(proto)) {
      b.proto = *p;
    } else {
      r.fail(Errc::kInvalidPolicy, "proto: expected http, connect, socks5 or socks4");
    }
  }
  return Body{std::move(b)};
}

Result<Body> read_fs_quarantine(Reader& r, const Limits& lim) {
  FsQuarantine b;
  b.path = r.bytes("path", lim.max_path);
  b.rule = r.bytes("rule", lim.max_text);
  b.reason = r.bytes("reason", lim.max_text);
  b.moved_to = r.bytes("moved_to", lim.max_path, false);
  if (r.has("removed")) b.removed = r.bytes_array("removed", lim.max_argv, lim.max_text);
  b.restore = r.bytes("restore", lim.max_data, false);
  return Body{std::move(b)};
}

Result<Body> read_log_truncated(Reader& r, const Limits&) {
  LogTruncated b;
  b.max_output_bytes = r.count("max_output_bytes");
  // Optional: a log before issue 38.4 has the cap alone.
  b.omitted_bytes = r.count("omitted_bytes", false);
  b.stdout_bytes = r.count("stdout_bytes", false);
  b.stderr_bytes = r.count("stderr_bytes", false);
  b.stdout_sha256 = r.word("stdout_sha256", false);
  b.stderr_sha256 = r.word("stderr_sha256", false);
  return Body{std::move(b)};
}

Result<Body> read_net_ask(Reader& r, const Limits& lim) {
  NetAsk b;
  b.ask = r.count("ask");
  const std::string proto = r.word("proto");
  b.host = r.bytes("host", lim.max_text);
  b.port = static_cast<std::uint16_t>(r.integer("port", 1, 65535));
  b.address = r.bytes("address", lim.max_text, false);
  b.timeout_ms = r.count("timeout_ms");
  if (!r.failed()) {
    if (auto p = proto_from(proto)) {
      b.proto = *p;
    } else {
      r.fail(Errc::kInvalidPolicy, "proto: expected http, connect, socks5 or socks4");
    }
  }
  return Body{std::move(b)};
}

Result<Body> read_net_ask_answer(Reader& r, const Limits& lim) {
  NetAskAnswer b;
  b.ask = r.count("ask");
  b.answer = r.word("answer");
  b.entry = r.bytes("entry", lim.max_text, false);
  b.written = r.bytes("written", lim.max_path, false);
  b.error = r.bytes("error", lim.max_text, false);
  b.via = r.word("via", false);
  return Body{std::move(b)};
}

Result<Body> read_fs_image(Reader& r, const Limits& lim) {
  FsImage b;
  b.phase = r.word("phase");
  b.path = r.bytes("path", lim.max_path);
  b.type = r.word("type");
  b.size = r.count("size", false);
  b.mode = static_cast<std::uint32_t>(r.integer("mode", 0, 07777, false));
  b.uid = static_cast<std::uint32_t>(r.integer("uid", 0, 0xffffffffLL, false));
  b.gid = static_cast<std::uint32_t>(r.integer("gid", 0, 0xffffffffLL, false));
  b.sha256 = r.word("sha256", false);
  b.target = r.bytes("target", lim.max_path, false);
  b.stored = r.boolean("stored");
  b.note = r.bytes("note", lim.max_text, false);
  b.best_effort = r.boolean("best_effort");
  return Body{std::move(b)};
}

Result<Body> read_net_unix(Reader& r, const Limits& lim) {
  NetUnix b;
  b.pid = r.integer("pid", 1, kMaxPid);
  b.syscall = r.word("syscall");
  b.type = r.word("type");
  b.path = r.bytes("path", lim.max_path);
  b.resolved = r.bytes("resolved", lim.max_path);
  const std::string verdict = r.word("verdict");
  b.reason = r.bytes("reason", lim.max_text);
  b.result = r.word("result");
  if (!r.failed()) {
    if (auto v = net_verdict_from(verdict)) {
      b.verdict = *v;
    } else {
      r.fail(Errc::kInvalidPolicy, "verdict: expected allowed or denied");
    }
  }
  return Body{std::move(b)};
}

Result<Body> read_net_request(Reader& r, const Limits& lim) {
  NetRequest b;
  b.method = r.bytes("method", lim.max_text);
  b.host = r.bytes("host", lim.max_text);
  b.port = static_cast<std::uint16_t>(r.integer("port", 0, 65535));
  b.path = r.bytes("path", lim.max_path);
  b.status = static_cast<int>(r.integer("status", 0, 999));
  b.bytes_up = r.count("bytes_up");
  b.bytes_down = r.count("bytes_down");
  b.secret_injected = r.boolean("secret_injected");
  const std::string verdict = r.word("verdict");
  b.rule = r.bytes("rule", lim.max_text, false);
  b.reason = r.bytes("reason", lim.max_text, false);
  if (!r.failed()) {
    if (auto v = net_verdict_from(verdict)) {
      b.verdict = *v;
    } else {
      r.fail(Errc::kInvalidPolicy, "verdict: expected allowed or denied");
    }
  }
  return Body{std::move(b)};
}

Result<Body> read_body(Kind kind, Reader& r, const Limits& lim) {
  switch (kind) {
    case Kind::kSessionStart:
      return read_session_start(r, lim);
    case Kind::kProcExec: {
      ProcExec b;
      b.pid = r.integer("pid", 1, kMaxPid);
      b.ppid = r.integer("ppid", 0, kMaxPid);
      b.argv = r.bytes_array("argv", lim.max_argv, lim.max_arg);
      b.cwd = r.bytes("cwd", lim.max_path);
      b.truncated = r.boolean("truncated");
      b.exe = r.bytes("exe", lim.max_path, false);
      return Body{std::move(b)};
    }
    case Kind::kFsWrite:
      return read_fs_write(r, lim);
    case Kind::kNetDecision:
      return read_net_decision(r, lim);
    case Kind::kNetUpstreamFailure:
      return read_net_upstream_failure(r, lim);
    case Kind::kIoStdout:
      return Body{IoStdout{r.bytes("data", lim.max_data, true, /*allow_nul=*/true)}};
    case Kind::kIoStderr:
      return Body{IoStderr{r.bytes("data", lim.max_data, true, /*allow_nul=*/true)}};
    case Kind::kObserverStats: {
      ObserverStats b;
      b.events = r.count("events");
      b.dropped = r.count("dropped");
      b.held = r.count("held");
      return Body{b};
    }
    case Kind::kAnnotation: {
      Annotation b;
      b.text = r.bytes("text", lim.max_data);
      b.newline_before = r.boolean("newline_before");
      return Body{std::move(b)};
    }
    case Kind::kFsQuarantine:
      return read_fs_quarantine(r, lim);
    case Kind::kSessionEnd: {
      SessionEnd b;
      read_ending(r, lim, b);
      b.reason = r.bytes("reason", lim.max_text, false);
      b.mac = r.word("mac", false);
      return Body{std::move(b)};
    }
    case Kind::kCommandStart: {
      CommandStart b;
      b.argv = r.bytes_array("argv", lim.max_argv, lim.max_arg);
      b.cwd = r.bytes("cwd", lim.max_path);
      return Body{std::move(b)};
    }
    case Kind::kCommandEnd: {
      CommandEnd b;
      read_ending(r, lim, b);
      return Body{std::move(b)};
    }
    case Kind::kPolicyUpdate: {
      PolicyUpdate b;
      b.add = r.bytes_array("add", lim.max_argv, lim.max_text);
      b.remove = r.bytes_array("remove", lim.max_argv, lim.max_text);
      return Body{std::move(b)};
    }
    case Kind::kLogTruncated:
      return read_log_truncated(r, lim);
    case Kind::kNetAsk:
      return read_net_ask(r, lim);
    case Kind::kNetAskAnswer:
      return read_net_ask_answer(r, lim);
    case Kind::kLimitReached: {
      LimitReached b;
      b.limit = r.bytes("limit", lim.max_text);
      b.detail = r.bytes("detail", lim.max_text);
      return Body{std::move(b)};
    }
    case Kind::kFsImage:
      return read_fs_image(r, lim);
    case Kind::kFsRead: {
      FsRead b;
      b.pid = r.integer("pid", 1, kMaxPid);
      b.syscall = r.word("syscall");
      b.path = r.bytes("path", lim.max_path);
      b.resolved = r.bytes("resolved", lim.max_path);
      b.reason = r.bytes("reason", lim.max_text);
      return Body{std::move(b)};
    }
    case Kind::kCommandCancel: {
      CommandCancel b;
      b.by = r.word("by");
      b.via = r.bytes("via", lim.max_text);
      b.reason = r.bytes("reason", lim.max_text, false);
      b.grace_ms = r.count("grace_ms");
      return Body{std::move(b)};
    }
    case Kind::kNetUnix:
      return read_net_unix(r, lim);
    case Kind::kNetRequest: return read_net_request(r, lim);
  }
  return make_error(Errc::kInternal, "unknown kind");
}

// Parses, then checks what only the value can show (bounds, vocabularies).
Result<Body> finish_body(Kind kind, Reader& r, const Limits& lim) {
  auto body = read_body(kind, r, lim);
  if (!body) return body;
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
