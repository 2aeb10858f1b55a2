// The event schema's value checks: bounds and vocabularies a parsed record must meet,
// whoever wrote it (validate(), event_schema.h).
#include <algorithm>
#include <variant>

#include "supervisor/core/policy/mandatory_denies.h"
#include "supervisor/core/events/syscall_table.h"
#include "supervisor/core/events/event_schema.h"
#include "supervisor/core/events/event_schema_detail.h"

namespace vigil::events {

using detail::is_hex64;
using detail::is_token;
using detail::kMaxPid;

namespace {

// One check per kind of record (std::visit picks it), over the limits of the read.
struct Validator {
  const Limits& lim;

  static Result<void> bad(std::string why) { return make_error(Errc::kInvalidPolicy, std::move(why)); }
  static bool no_nul(const std::string& s) { return s.find('\0') == std::string::npos; }
  bool path_ok(const std::string& s) const { return s.size() <= lim.max_path && no_nul(s); }
  bool text_ok(const std::string& s) const { return s.size() <= lim.max_text && no_nul(s); }
  bool argv_ok(const std::vector<std::string>& v) const {
    return v.size() <= lim.max_argv && std::all_of(v.begin(), v.end(), [&](const std::string& a) {
             return a.size() <= lim.max_arg && no_nul(a);
           });
  }
  template <class End>
  Result<void> ending_ok(const End& b) const {
    if (b.exit_code.has_value() == b.signal.has_value())
      return bad("exactly one of exit_code and signal");
    if (b.exit_code && (*b.exit_code < 0 || *b.exit_code > 255)) return bad("exit_code out of range");
    if (b.signal && (*b.signal < 1 || *b.signal > 64)) return bad("signal out of range");
    if (b.counters.size() > lim.max_counters) return bad("counters: too many entries");
    for (const auto& [k, v] : b.counters) {
      if (!is_token(k, 64)) return bad("counters: bad name");
    }
    return {};
  }

  Result<void> operator()(const SessionStart& b) const {
    if (!argv_ok(b.argv)) return bad("argv: too many or too long entries, or a NUL byte");
    if (!path_ok(b.cwd) || !path_ok(b.log)) return bad("cwd/log: too long or a NUL byte");
    if (!b.witness.empty() && b.witness != "gatekeeper" && b.witness != "best-effort")
      return bad("witness: expected gatekeeper or best-effort");
    if (b.scope) {
      for (const auto* list : {&b.scope->writable, &b.scope->sandbox_own}) {
        if (list->size() > lim.max_argv) return bad("scope: too many entries");
        for (const auto& p : *list)
          if (p.empty() || p[0] != '/' || !path_ok(p)) return bad("scope: expected absolute paths");
      }
    }
    if (b.backend != "bwrap" && b.backend != "seatbelt" && b.backend != "none") {
      return bad("backend: expected bwrap, seatbelt or none");
    }
    if (!b.key_id.empty() &&
        (b.key_id.size() != 16 || !is_hex64(b.key_id + std::string(48, '0')))) {
      return bad("key_id: expected 16 lower-case hex digits");
    }
    if (!b.policy_digest.empty() && !is_hex64(b.policy_digest)) {
      return bad("policy_digest: expected 64 lower-case hex digits");
    }
    if (!text_ok(b.versions.vigil) || !text_ok(b.versions.bwrap) ||
        !text_ok(b.versions.kernel)) {
      return bad("versions: too long or a NUL byte");
    }
    return {};
  }
  Result<void> operator()(const ProcExec& b) const {
    if (b.pid < 1 || b.pid > kMaxPid || b.ppid < 0 || b.ppid > kMaxPid)
      return bad("pid out of range");
    if (!argv_ok(b.argv)) return bad("argv: too many or too long entries, or a NUL byte");
    if (!path_ok(b.cwd) || !path_ok(b.exe)) return bad("cwd/exe: too long or a NUL byte");
    return {};
  }
  Result<void> operator()(const FsWrite& b) const {
    if (b.pid < 1 || b.pid > kMaxPid) return bad("pid out of range");
    if (!is_known_write_syscall(b.syscall))
      return bad("syscall: not a write-intent syscall vigil traps");
    if (!path_ok(b.path) || !path_ok(b.resolved) || !path_ok(b.from) ||
        !path_ok(b.from_resolved)) {
      return bad("path: longer than the limit or a NUL byte");
    }
    if (!b.resolved.empty() && b.resolved[0] != '/')
      return bad("resolved: must be absolute");
    if (!b.from_resolved.empty() && b.from_resolved[0] != '/')
      return bad("from_resolved: must be absolute");
    if (!text_ok(b.reason)) return bad("reason: too long or a NUL byte");
    if (!b.result.empty() && !is_call_result(b.result))
      return bad("result: expected 0 or an errno name (EEXIST, EROFS, ...)");
    if (!b.unguarded.empty()) {
      if (mandatory_deny_named(b.unguarded) == nullptr)
        return bad("unguarded: not a protected name");
      if (b.verdict != Verdict::kAllowed) return bad("unguarded: only on an allowed write");
    }
    if (!b.ignored.empty() && (b.verdict != Verdict::kDenied || !text_ok(b.ignored)))
      return bad("ignored: only on a denied write, one line");
    if (!text_ok(b.rule_id)) return bad("rule_id: too long or a NUL byte");
    return {};
  }
  Result<void> operator()(const NetDecision& b) const {
    if (!text_ok(b.host) || !text_ok(b.rule) || !text_ok(b.reason) ||
        !text_ok(b.refused_by) || !text_ok(b.address) || !text_ok(b.guard_check) ||
        !text_ok(b.rule_id) || !text_ok(b.program)) {
      return bad("net.decision: a field is too long or has a NUL byte");
    }
    if (!b.ignored.empty() && (b.verdict != NetVerdict::kDenied || !text_ok(b.ignored)))
      return bad("ignored: only on a denied connection, one line");
    return {};
  }
  Result<void> operator()(const NetUpstreamFailure& b) const {
    if (!text_ok(b.host) || !text_ok(b.address) || !text_ok(b.what)) {
      return bad("net.upstream_failure: a field is too long or has a NUL byte");
    }
    return {};
  }
  Result<void> operator()(const IoStdout& b) const {
    return b.data.size() <= lim.max_data ? Result<void>() : bad("data: chunk too large");
  }
  Result<void> operator()(const IoStderr& b) const {
    return b.data.size() <= lim.max_data ? Result<void>() : bad("data: chunk too large");
  }
  Result<void> operator()(const ObserverStats&) const { return {}; }
  Result<void> operator()(const Annotation& b) const {
    if (b.text.size() > lim.max_data || !no_nul(b.text))
      return bad("text: too long or a NUL byte");
    return {};
  }
  Result<void> operator()(const FsQuarantine& b) const {
    if (!path_ok(b.path) || !path_ok(b.moved_to))
      return bad("path: longer than the limit or a NUL byte");
    if (b.path.empty() || b.path[0] != '/') return bad("path: must be absolute");
    if (!b.moved_to.empty() && b.moved_to[0] != '/') return bad("moved_to: must be absolute");
    if (!text_ok(b.rule) || !text_ok(b.reason)) return bad("rule, reason: too long or a NUL byte");
    if (b.removed.size() > lim.max_argv || b.restore.size() > lim.max_data || !no_nul(b.restore))
      return bad("removed, restore: too many or too long, or a NUL byte");
    for (const auto& l : b.removed)
      if (!text_ok(l)) return bad("removed: a line too long or with a NUL byte");
    return {};
  }
  Result<void> operator()(const SessionEnd& b) const {
    if (auto r = ending_ok(b); !r) return r;
    if (b.reason.size() > lim.max_text || !no_nul(b.reason))
      return bad("reason: too long or a NUL byte");
    if (!b.mac.empty() && !is_hex64(b.mac)) return bad("mac: expected 64 lower-case hex digits");
    return {};
  }
  Result<void> operator()(const CommandStart& b) const {
    if (!argv_ok(b.argv)) return bad("argv: too many or too long entries, or a NUL byte");
    if (!path_ok(b.cwd)) return bad("cwd: too long or a NUL byte");
    return {};
  }
  Result<void> operator()(const CommandEnd& b) const { return ending_ok(b); }
  Result<void> operator()(const PolicyUpdate& b) const {
    for (const auto* list : {&b.add, &b.remove}) {
      if (list->size() > lim.max_argv || !std::all_of(list->begin(), list->end(),
                                                         [this](const std::string& t) { return text_ok(t); }))
        return bad("add/remove: too many or too long entries, or a NUL byte");
    }
    return {};
  }
  Result<void> operator()(const LogTruncated& b) const {
    // Empty (a log before issue 38.4) or 64 lower-case hex digits.
    const auto digest_ok = [](const std::string& d) {
      return d.empty() ||
             (d.size() == 64 && std::all_of(d.begin(), d.end(), [](char c) {
                return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
              }));
    };
    if (!digest_ok(b.stdout_sha256) || !digest_ok(b.stderr_sha256))
      return bad("stdout_sha256/stderr_sha256: expected 64 lower-case hex digits");
    return {};
  }
  Result<void> operator()(const NetAsk& b) const {
    if (!text_ok(b.host) || !text_ok(b.address)) return bad("host/address: too long or a NUL byte");
    return {};
  }
  Result<void> operator()(const NetAskAnswer& b) const {
    static constexpr std::string_view kAnswers[] = {"once", "session", "always",
                                                    "deny", "timeout", "cancelled"};
    if (std::find(std::begin(kAnswers), std::end(kAnswers), b.answer) == std::end(kAnswers))
      return bad("answer: expected once, session, always, deny, timeout or cancelled");
    if (!text_ok(b.entry) || !path_ok(b.written) || !text_ok(b.error))
      return bad("entry/written/error: too long or a NUL byte");
    if (!b.via.empty() && b.via != "tty" && b.via != "client")
      return bad("via: expected tty or client");
    return {};
  }
  Result<void> operator()(const LimitReached& b) const {
    if (!text_ok(b.limit) || !text_ok(b.detail) || b.limit.empty())
      return bad("limit, detail: empty, too long or a NUL byte");
    return {};
  }
  Result<void> operator()(const FsImage& b) const {
    if (b.phase != "pre" && b.phase != "post") return bad("phase: expected pre or post");
    if (!path_ok(b.path) || b.path.empty() || b.path[0] != '/')
      return bad("path: absolute, within the limit, no NUL byte");
    if (b.type != "file" && b.type != "symlink" && b.type != "dir" && b.type != "other" &&
        b.type != "absent")
      return bad("type: expected file, symlink, dir, other or absent");
    if (!b.sha256.empty() && !is_hex64(b.sha256))
      return bad("sha256: expected 64 lower-case hex digits");
    if (b.stored && b.sha256.empty()) return bad("stored: needs sha256");
    if (!path_ok(b.target) || !text_ok(b.note)) return bad("target/note: too long or a NUL byte");
    return {};
  }
  Result<void> operator()(const FsRead& b) const {
    if (b.pid < 1 || b.pid > kMaxPid) return bad("pid out of range");
    const WriteSyscall* row = find_write_syscall(b.syscall);
    if (row == nullptr || row->emulation != Emulation::kOpen || b.syscall == "creat")
      return bad("syscall: expected open, openat or openat2");
    if (!path_ok(b.path) || !path_ok(b.resolved))
      return bad("path: longer than the limit or a NUL byte");
    if (b.resolved.empty() || b.resolved[0] != '/') return bad("resolved: must be absolute");
    if (!text_ok(b.reason)) return bad("reason: too long or a NUL byte");
    return {};
  }
  Result<void> operator()(const NetRequest& b) const {
    if (!text_ok(b.method) || !text_ok(b.host) || !path_ok(b.path) || !text_ok(b.rule) ||
        !text_ok(b.reason)) {
      return bad("net.request: a field is too long or has a NUL byte");
    }
    return {};
  }
  Result<void> operator()(const NetUnix& b) const {
    if (b.pid < 1 || b.pid > kMaxPid) return bad("pid out of range");
    if (b.syscall != "connect" && b.syscall != "socket")
      return bad("syscall: expected connect or socket");
    if (!path_ok(b.path) || !path_ok(b.resolved))
      return bad("path: longer than the limit or a NUL byte");
    if (!b.resolved.empty() && b.resolved[0] != '/') return bad("resolved: must be absolute");
    if (!text_ok(b.reason) || !text_ok(b.type)) return bad("reason, type: too long or a NUL byte");
    if (!is_call_result(b.result))
      return bad("result: expected 0 or an errno name (EACCES, ECONNREFUSED, ...)");
    return {};
  }
  Result<void> operator()(const CommandCancel& b) const {
    if (b.by != "client" && b.by != "disconnect") return bad("by: expected client or disconnect");
    if (b.via.empty() || !text_ok(b.via) || !text_ok(b.reason))
      return bad("via, reason: empty, too long or a NUL byte");
    return {};
  }
};

}  // namespace

Result<void> validate(const Body& body, const Limits& lim) { return std::visit(Validator{lim}, body); }

}  // namespace vigil::events
