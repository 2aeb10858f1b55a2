// One reader per kind of record (read_body(), event_reader.h): which member each field of
// the kind's row of the field table (event_fields.cc) fills. The names, types, presence
// and bounds are the table's; the vocabularies (verdict, proto) are checked here.
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "supervisor/core/events/event_reader.h"
#include "supervisor/core/events/event_schema.h"
#include "supervisor/core/events/event_schema_detail.h"

namespace vigil::events::detail {
namespace {

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
// The closed vocabularies: a word that is not one of them fails the read, naming them.
NetProto read_proto(FieldReader& r) {
  const std::string s = r.word("proto");
  if (r.failed()) return NetProto::kHttp;
  if (auto p = proto_from(s)) return *p;
  r.fail(Errc::kInvalidPolicy, "proto: expected http, connect, socks5 or socks4");
  return NetProto::kHttp;
}
NetVerdict read_net_verdict(FieldReader& r) {
  const std::string s = r.word("verdict");
  if (r.failed()) return NetVerdict::kDenied;
  if (auto v = net_verdict_from(s)) return *v;
  r.fail(Errc::kInvalidPolicy, "verdict: expected allowed or denied");
  return NetVerdict::kDenied;
}
Verdict read_fs_verdict(FieldReader& r) {
  const std::string s = r.word("verdict");
  if (r.failed()) return Verdict::kDenied;
  if (auto v = fs_verdict_from(s)) return *v;
  r.fail(Errc::kInvalidPolicy, "verdict: expected allowed, denied or ephemeral");
  return Verdict::kDenied;
}
std::uint16_t read_port(FieldReader& r) { return static_cast<std::uint16_t>(r.integer("port")); }

// session.end and command.end: exit_code or signal, duration_ns, counters.
template <class Ending>
void read_ending(FieldReader& r, const Limits& lim, Ending& b) {
  if (r.raw().has("exit_code")) b.exit_code = static_cast<int>(r.integer("exit_code"));
  if (r.raw().has("signal")) b.signal = static_cast<int>(r.integer("signal"));
  r.raw().mark("exit_code");
  r.raw().mark("signal");
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

// A nested object of session.start: its own reader; a problem is named under `key`.
template <class Fill>
void read_nested(FieldReader& r, std::string_view key, Fill fill) {
  const json* v = r.object(key);
  if (v == nullptr) return;
  Reader nr(*v);
  fill(nr);
  if (auto done = nr.finish(); !done)
    r.fail(done.error().code, std::string(key) + "." + done.error().message);
}

// One reader per kind (read_body() dispatches): which member each field of the kind's
// table row fills; names, types, presence and bounds are the table's.
Body read_session_start(FieldReader& r, const Limits& lim) {
  SessionStart b;
  b.argv = r.bytes_array("argv");
  b.cwd = r.bytes("cwd");
  b.backend = r.word("backend");
  b.policy_digest = r.word("policy_digest");
  read_nested(r, "versions", [&](Reader& vr) {
    b.versions.vigil = vr.bytes("vigil", lim.max_text);
    b.versions.bwrap = vr.bytes("bwrap", lim.max_text);
    b.versions.kernel = vr.bytes("kernel", lim.max_text);
  });
  b.log = r.bytes("log");
  b.key_id = r.word("key_id");
  b.witness = r.word("witness");
  read_nested(r, "scope", [&](Reader& sr) {
    HostScope scope;
    scope.writable = sr.bytes_array("writable", lim.max_argv, lim.max_path);
    scope.sandbox_own = sr.bytes_array("sandbox_own", lim.max_argv, lim.max_path);
    b.scope = std::move(scope);
  });
  return b;
}

Body read_proc_exec(FieldReader& r) {
  ProcExec b;
  b.pid = r.integer("pid");
  b.ppid = r.integer("ppid");
  b.argv = r.bytes_array("argv");
  b.cwd = r.bytes("cwd");
  b.truncated = r.boolean("truncated");
  b.exe = r.bytes("exe");
  return b;
}

Body read_fs_write(FieldReader& r) {
  FsWrite b;
  b.pid = r.integer("pid");
  b.syscall = r.word("syscall");
  b.path = r.bytes("path");
  b.resolved = r.bytes("resolved");
  b.flags = r.count("flags");
  b.verdict = read_fs_verdict(r);
  b.reason = r.bytes("reason");
  b.from = r.bytes("from");
  b.from_resolved = r.bytes("from_resolved");
  b.unguarded = r.bytes("unguarded");
  b.result = r.word("result");
  b.ignored = r.bytes("ignored");
  b.rule_id = r.bytes("rule_id");
  return b;
}

Body read_net_decision(FieldReader& r) {
  NetDecision b;
  b.proto = read_proto(r);
  b.host = r.bytes("host");
  b.port = read_port(r);
  b.verdict = read_net_verdict(r);
  b.rule = r.bytes("rule");
  b.reason = r.bytes("reason");
  b.refused_by = r.bytes("refused_by");
  b.address = r.bytes("address");
  b.guard_check = r.bytes("guard_check");
  b.ignored = r.bytes("ignored");
  b.rule_id = r.bytes("rule_id");
  b.captured = r.boolean("captured");
  b.program = r.bytes("program");
  return b;
}

Body read_net_upstream_failure(FieldReader& r) {
  NetUpstreamFailure b;
  b.proto = read_proto(r);
  b.host = r.bytes("host");
  b.port = read_port(r);
  b.address = r.bytes("address");
  b.what = r.bytes("what");
  return b;
}

Body read_fs_quarantine(FieldReader& r) {
  FsQuarantine b;
  b.path = r.bytes("path");
  b.rule = r.bytes("rule");
  b.reason = r.bytes("reason");
  b.moved_to = r.bytes("moved_to");
  b.removed = r.bytes_array("removed");
  b.restore = r.bytes("restore");
  return b;
}

Body read_log_truncated(FieldReader& r) {
  LogTruncated b;
  b.max_output_bytes = r.count("max_output_bytes");
  b.omitted_bytes = r.count("omitted_bytes");
  b.stdout_bytes = r.count("stdout_bytes");
  b.stderr_bytes = r.count("stderr_bytes");
  b.stdout_sha256 = r.word("stdout_sha256");
  b.stderr_sha256 = r.word("stderr_sha256");
  return b;
}

Body read_net_ask(FieldReader& r) {
  NetAsk b;
  b.ask = r.count("ask");
  b.proto = read_proto(r);
  b.host = r.bytes("host");
  b.port = read_port(r);
  b.address = r.bytes("address");
  b.timeout_ms = r.count("timeout_ms");
  return b;
}

Body read_net_ask_answer(FieldReader& r) {
  NetAskAnswer b;
  b.ask = r.count("ask");
  b.answer = r.word("answer");
  b.entry = r.bytes("entry");
  b.written = r.bytes("written");
  b.error = r.bytes("error");
  b.via = r.word("via");
  return b;
}

Body read_fs_image(FieldReader& r) {
  FsImage b;
  b.phase = r.word("phase");
  b.path = r.bytes("path");
  b.type = r.word("type");
  b.size = r.count("size");
  b.mode = static_cast<std::uint32_t>(r.integer("mode"));
  b.uid = static_cast<std::uint32_t>(r.integer("uid"));
  b.gid = static_cast<std::uint32_t>(r.integer("gid"));
  b.sha256 = r.word("sha256");
  b.target = r.bytes("target");
  b.stored = r.boolean("stored");
  b.note = r.bytes("note");
  b.best_effort = r.boolean("best_effort");
  return b;
}

Body read_fs_read(FieldReader& r) {
  FsRead b;
  b.pid = r.integer("pid");
  b.syscall = r.word("syscall");
  b.path = r.bytes("path");
  b.resolved = r.bytes("resolved");
  b.reason = r.bytes("reason");
  return b;
}

Body read_net_unix(FieldReader& r) {
  NetUnix b;
  b.pid = r.integer("pid");
  b.syscall = r.word("syscall");
  b.type = r.word("type");
  b.path = r.bytes("path");
  b.resolved = r.bytes("resolved");
  b.verdict = read_net_verdict(r);
  b.reason = r.bytes("reason");
  b.result = r.word("result");
  return b;
}

Body read_net_request(FieldReader& r) {
  NetRequest b;
  b.method = r.bytes("method");
  b.host = r.bytes("host");
  b.port = read_port(r);
  b.path = r.bytes("path");
  b.status = static_cast<int>(r.integer("status"));
  b.bytes_up = r.count("bytes_up");
  b.bytes_down = r.count("bytes_down");
  b.secret_injected = r.boolean("secret_injected");
  b.verdict = read_net_verdict(r);
  b.rule = r.bytes("rule");
  b.reason = r.bytes("reason");
  return b;
}

// The small kinds, a few fields each.
Body read_small(Kind kind, FieldReader& r, const Limits& lim) {
  switch (kind) {
    case Kind::kIoStdout:
      return IoStdout{r.bytes("data")};
    case Kind::kIoStderr:
      return IoStderr{r.bytes("data")};
    case Kind::kObserverStats:
      return ObserverStats{r.count("events"), r.count("dropped"), r.count("held")};
    case Kind::kAnnotation: {
      Annotation b;
      b.text = r.bytes("text");
      b.newline_before = r.boolean("newline_before");
      return b;
    }
    case Kind::kSessionEnd: {
      SessionEnd b;
      read_ending(r, lim, b);
      b.reason = r.bytes("reason");
      b.mac = r.word("mac");
      return b;
    }
    case Kind::kCommandStart:
      return CommandStart{r.bytes_array("argv"), r.bytes("cwd")};
    case Kind::kCommandEnd: {
      CommandEnd b;
      read_ending(r, lim, b);
      return b;
    }
    case Kind::kPolicyUpdate:
      return PolicyUpdate{r.bytes_array("add"), r.bytes_array("remove")};
    case Kind::kLimitReached:
      return LimitReached{r.bytes("limit"), r.bytes("detail")};
    case Kind::kCommandCancel: {
      CommandCancel b;
      b.by = r.word("by");
      b.via = r.bytes("via");
      b.reason = r.bytes("reason");
      b.grace_ms = r.count("grace_ms");
      return b;
    }
    default:
      break;
  }
  r.fail(Errc::kInternal, "unknown kind");
  return Annotation{};
}

}  // namespace

Body read_body(Kind kind, FieldReader& r, const Limits& lim) {
  switch (kind) {
    case Kind::kSessionStart: return read_session_start(r, lim);
    case Kind::kProcExec: return read_proc_exec(r);
    case Kind::kFsWrite: return read_fs_write(r);
    case Kind::kNetDecision: return read_net_decision(r);
    case Kind::kNetUpstreamFailure: return read_net_upstream_failure(r);
    case Kind::kFsQuarantine: return read_fs_quarantine(r);
    case Kind::kLogTruncated: return read_log_truncated(r);
    case Kind::kNetAsk: return read_net_ask(r);
    case Kind::kNetAskAnswer: return read_net_ask_answer(r);
    case Kind::kFsImage: return read_fs_image(r);
    case Kind::kFsRead: return read_fs_read(r);
    case Kind::kNetUnix: return read_net_unix(r);
    case Kind::kNetRequest: return read_net_request(r);
    default: return read_small(kind, r, lim);
  }
}

}  // namespace vigil::events::detail
