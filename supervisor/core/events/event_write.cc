// The event schema's one serialiser: an Event as its canonical log line (keys in the
// schema's order, pure ASCII, byte strings that are not UTF-8 as {"b64": ...}).
#include <nlohmann/json.hpp>
#include <variant>

#include "supervisor/core/base/display_text.h"
#include "supervisor/core/events/event_schema.h"
#include "supervisor/core/events/event_schema_detail.h"

namespace vigil::events {
namespace {

using ojson = nlohmann::ordered_json;  // serialising: the canonical key order
using detail::Overloaded;

ojson bytes_json(const std::string& s) {
  if (is_valid_utf8(s)) return ojson(s);
  return ojson{{"b64", base64_encode(s)}};
}

// What `s` costs as an ASCII-only JSON string: 2 bytes for \n \" and the like, 6 for any
// other control byte and for each non-ASCII character (12 above U+FFFF, a surrogate pair).
std::size_t json_string_cost(std::string_view s) {
  std::size_t cost = 0;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t')
      cost += 2;
    else if (c < 0x20)
      cost += 6;
    else if (c < 0x80)
      cost += 1;
    else if (c >= 0xf0)
      cost += 12;
    else if (c >= 0xc0)
      cost += 6;
  }
  return cost;
}

// Output chunks: text while the JSON stays within twice the bytes (any UTF-8 text, colour
// escapes and all); base64 (4/3 of the bytes) for binary-dense output, where JSON would
// spend 6 bytes on every NUL. Deterministic, so it is the canonical form. Logs written
// before this rule (`legacy`: text whenever valid UTF-8) still read and verify.
ojson data_json(const std::string& s, bool legacy) {
  if (is_valid_utf8(s) && (legacy || json_string_cost(s) <= 2 * s.size())) return ojson(s);
  return ojson{{"b64", base64_encode(s)}};
}

ojson bytes_array_json(const std::vector<std::string>& v) {
  ojson a = ojson::array();
  for (const auto& s : v) a.push_back(bytes_json(s));
  return a;
}

template <class Ending>
void put_ending(ojson& j, const Ending& b) {
  if (b.exit_code) j["exit_code"] = *b.exit_code;
  if (b.signal) j["signal"] = *b.signal;
  j["duration_ns"] = b.duration_ns;
  ojson c = ojson::object();
  for (const auto& [k, v] : b.counters) c[k] = v;  // std::map: sorted, so canonical
  j["counters"] = std::move(c);
}

void put_session_start(ojson& j, const SessionStart& b) {
  j["argv"] = bytes_array_json(b.argv);
  j["cwd"] = bytes_json(b.cwd);
  j["backend"] = b.backend;
  j["policy_digest"] = b.policy_digest;
  j["versions"] = ojson{{"vigil", bytes_json(b.versions.vigil)},
                        {"bwrap", bytes_json(b.versions.bwrap)},
                        {"kernel", bytes_json(b.versions.kernel)}};
  if (!b.log.empty()) j["log"] = bytes_json(b.log);
  if (!b.key_id.empty()) j["key_id"] = b.key_id;
  if (!b.witness.empty()) j["witness"] = b.witness;
  if (b.scope) {
    j["scope"] = ojson{{"writable", bytes_array_json(b.scope->writable)},
                       {"sandbox_own", bytes_array_json(b.scope->sandbox_own)}};
  }
}

void put_fs_write(ojson& j, const FsWrite& b) {
  j["pid"] = b.pid;
  j["syscall"] = b.syscall;
  j["path"] = bytes_json(b.path);
  j["resolved"] = bytes_json(b.resolved);
  j["flags"] = b.flags;
  j["verdict"] = to_string(b.verdict);
  j["reason"] = bytes_json(b.reason);
  if (!b.from.empty()) j["from"] = bytes_json(b.from);
  if (!b.from_resolved.empty()) j["from_resolved"] = bytes_json(b.from_resolved);
  if (!b.unguarded.empty()) j["unguarded"] = bytes_json(b.unguarded);
  if (!b.result.empty()) j["result"] = b.result;
  if (!b.ignored.empty()) j["ignored"] = bytes_json(b.ignored);
  if (!b.rule_id.empty()) j["rule_id"] = bytes_json(b.rule_id);
}

void put_net_decision(ojson& j, const NetDecision& b) {
  j["proto"] = to_string(b.proto);
  j["host"] = bytes_json(b.host);
  j["port"] = b.port;
  j["verdict"] = to_string(b.verdict);
  j["rule"] = bytes_json(b.rule);
  j["reason"] = bytes_json(b.reason);
  if (!b.refused_by.empty()) j["refused_by"] = bytes_json(b.refused_by);
  if (!b.address.empty()) j["address"] = bytes_json(b.address);
  if (!b.guard_check.empty()) j["guard_check"] = bytes_json(b.guard_check);
  if (!b.ignored.empty()) j["ignored"] = bytes_json(b.ignored);
  if (!b.rule_id.empty()) j["rule_id"] = bytes_json(b.rule_id);
  if (b.captured) j["captured"] = true;
  if (!b.program.empty()) j["program"] = bytes_json(b.program);
}

void put_log_truncated(ojson& j, const LogTruncated& b) {
  j["max_output_bytes"] = b.max_output_bytes;
  if (b.stdout_sha256.empty()) return;  // an old record, read back
  j["omitted_bytes"] = b.omitted_bytes;
  j["stdout_bytes"] = b.stdout_bytes;
  j["stderr_bytes"] = b.stderr_bytes;
  j["stdout_sha256"] = b.stdout_sha256;
  j["stderr_sha256"] = b.stderr_sha256;
}

void put_fs_image(ojson& j, const FsImage& b) {
  j["phase"] = b.phase;
  j["path"] = bytes_json(b.path);
  j["type"] = b.type;
  if (b.type != "absent") {
    j["size"] = b.size;
    j["mode"] = b.mode;
    j["uid"] = b.uid;
    j["gid"] = b.gid;
  }
  if (!b.sha256.empty()) j["sha256"] = b.sha256;
  if (b.type == "symlink") j["target"] = bytes_json(b.target);
  if (b.stored) j["stored"] = true;
  if (!b.note.empty()) j["note"] = bytes_json(b.note);
  if (b.best_effort) j["best_effort"] = true;
}

void put_net_request(ojson& j, const NetRequest& b) {
  j["method"] = bytes_json(b.method);
  j["host"] = bytes_json(b.host);
  j["port"] = b.port;
  j["path"] = bytes_json(b.path);
  j["status"] = b.status;
  j["bytes_up"] = b.bytes_up;
  j["bytes_down"] = b.bytes_down;
  j["secret_injected"] = b.secret_injected;
  j["verdict"] = to_string(b.verdict);
  if (!b.rule.empty()) j["rule"] = bytes_json(b.rule);
  if (!b.reason.empty()) j["reason"] = bytes_json(b.reason);
}

void put_net_unix(ojson& j, const NetUnix& b) {
  j["pid"] = b.pid;
  j["syscall"] = b.syscall;
  j["type"] = b.type;
  j["path"] = bytes_json(b.path);
  j["resolved"] = bytes_json(b.resolved);
  j["verdict"] = to_string(b.verdict);
  j["reason"] = bytes_json(b.reason);
  j["result"] = b.result;
}

void put_body(ojson& j, const Body& body, bool legacy) {
  std::visit(Overloaded{
                 [&](const SessionStart& b) { put_session_start(j, b); },
                 [&](const ProcExec& b) {
                   j["pid"] = b.pid;
                   j["ppid"] = b.ppid;
                   j["argv"] = bytes_array_json(b.argv);
                   j["cwd"] = bytes_json(b.cwd);
                   if (b.truncated) j["truncated"] = true;
                   if (!b.exe.empty()) j["exe"] = bytes_json(b.exe);
                 },
                 [&](const FsWrite& b) { put_fs_write(j, b); },
                 [&](const NetDecision& b) { put_net_decision(j, b); },
                 [&](const NetUpstreamFailure& b) {
                   j["proto"] = to_string(b.proto);
                   j["host"] = bytes_json(b.host);
                   j["port"] = b.port;
                   if (!b.address.empty()) j["address"] = bytes_json(b.address);
                   j["what"] = bytes_json(b.what);
                 },
                 [&](const IoStdout& b) { j["data"] = data_json(b.data, legacy); },
                 [&](const IoStderr& b) { j["data"] = data_json(b.data, legacy); },
                 [&](const ObserverStats& b) {
                   j["events"] = b.events;
                   j["dropped"] = b.dropped;
                   j["held"] = b.held;
                 },
                 [&](const Annotation& b) {
                   j["text"] = bytes_json(b.text);
                   if (b.newline_before) j["newline_before"] = true;
                 },
                 [&](const FsQuarantine& b) {
                   j["path"] = bytes_json(b.path);
                   j["rule"] = bytes_json(b.rule);
                   j["reason"] = bytes_json(b.reason);
                   if (!b.moved_to.empty()) j["moved_to"] = bytes_json(b.moved_to);
                   if (!b.removed.empty()) j["removed"] = bytes_array_json(b.removed);
                   if (!b.restore.empty()) j["restore"] = bytes_json(b.restore);
                 },
                 [&](const SessionEnd& b) {
                   put_ending(j, b);
                   if (!b.reason.empty()) j["reason"] = bytes_json(b.reason);
                   if (!b.mac.empty()) j["mac"] = b.mac;
                 },
                 [&](const CommandStart& b) {
                   j["argv"] = bytes_array_json(b.argv);
                   j["cwd"] = bytes_json(b.cwd);
                 },
                 [&](const CommandEnd& b) { put_ending(j, b); },
                 [&](const PolicyUpdate& b) {
                   j["add"] = bytes_array_json(b.add);
                   j["remove"] = bytes_array_json(b.remove);
                 },
                 [&](const LogTruncated& b) { put_log_truncated(j, b); },
                 [&](const NetAsk& b) {
                   j["ask"] = b.ask;
                   j["proto"] = to_string(b.proto);
                   j["host"] = bytes_json(b.host);
                   j["port"] = b.port;
                   if (!b.address.empty()) j["address"] = bytes_json(b.address);
                   j["timeout_ms"] = b.timeout_ms;
                 },
                 [&](const NetAskAnswer& b) {
                   j["ask"] = b.ask;
                   j["answer"] = b.answer;
                   if (!b.entry.empty()) j["entry"] = bytes_json(b.entry);
                   if (!b.written.empty()) j["written"] = bytes_json(b.written);
                   if (!b.error.empty()) j["error"] = bytes_json(b.error);
                   if (!b.via.empty()) j["via"] = b.via;
                 },
                 [&](const LimitReached& b) {
                   j["limit"] = bytes_json(b.limit);
                   j["detail"] = bytes_json(b.detail);
                 },
                 [&](const FsImage& b) { put_fs_image(j, b); },
                 [&](const FsRead& b) {
                   j["pid"] = b.pid;
                   j["syscall"] = b.syscall;
                   j["path"] = bytes_json(b.path);
                   j["resolved"] = bytes_json(b.resolved);
                   j["reason"] = bytes_json(b.reason);
                 },
                 [&](const CommandCancel& b) {
                   j["by"] = b.by;
                   j["via"] = bytes_json(b.via);
                   if (!b.reason.empty()) j["reason"] = bytes_json(b.reason);
                   j["grace_ms"] = b.grace_ms;
                 },
                 [&](const NetUnix& b) { put_net_unix(j, b); },
                 [&](const NetRequest& b) { put_net_request(j, b); },
             },
             body);
}


}  // namespace

std::string serialize(const Event& e) { return serialize_as(e, /*legacy=*/false); }

std::string serialize_as(const Event& e, bool legacy) {
  ojson j;
  j["v"] = kSchemaVersion;
  j["seq"] = e.seq;
  j["t"] = e.t;
  j["session"] = e.session;
  j["src"] = to_string(e.src);
  if (e.cmd) j["cmd"] = *e.cmd;
  j["kind"] = to_string(e.kind());
  put_body(j, e.body, legacy);
  j["prev"] = e.prev;
  // ensure_ascii: the log is pure ASCII. `replace` only matters for a session id or word
  // that is not UTF-8, which validate()/the writer never let through; it keeps this
  // function from throwing whatever it is given.
  return j.dump(-1, ' ', true, ojson::error_handler_t::replace);
}

}  // namespace vigil::events
