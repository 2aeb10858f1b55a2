// Event schema v1 (docs/events.md): the typed records of a session log, the parser for
// lines that come from inside the sandbox, the parser for lines read back from a log,
// and the one canonical serialisation.
//
// Trust: the observer runs inside the sandbox, so every line it sends is attacker
// input. parse_untrusted_event_line() bounds every size, checks every type, refuses
// unknown kinds and fields, and treats a line that sets a supervisor-owned field (seq,
// t, session, prev, src) or claims a kind only the supervisor or the proxy produces as
// forged. It never throws and never crashes (fuzzed: tests/fuzz/fuzz_event_line.cc).
//
// Byte strings (paths, argv, io data) are bytes, not text: a file name need not be
// UTF-8. In JSON a byte string is a plain string when it is valid UTF-8, otherwise an
// object {"b64": "<base64>"}; both decode to the exact bytes.
//
// Pure functions over values; thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "supervisor/core/base/base64.h"
#include "supervisor/core/base/display_text.h"  // is_valid_utf8
#include "supervisor/core/events/net.h"    // NetDecision, NetUpstreamFailure
#include "supervisor/core/events/write_action.h"
#include "supervisor/core/fs/host_scope.h"    // HostScope: what the sandbox could write on the host
#include "supervisor/core/fs/path_verdict.h"  // Verdict: allowed | denied | ephemeral
#include "supervisor/core/base/result.h"

namespace vigil::events {

inline constexpr int kSchemaVersion = 1;
// The `prev` of the first record of a session: 64 zeros, so `prev` always has one shape.
inline constexpr std::string_view kGenesisPrev =
    "0000000000000000000000000000000000000000000000000000000000000000";

enum class Source { kObserver, kProxy, kSupervisor };
enum class Kind {
  kSessionStart,
  kProcExec,
  kFsWrite,
  kNetDecision,
  kNetUpstreamFailure,
  kIoStdout,
  kIoStderr,
  kObserverStats,
  kAnnotation,
  kSessionEnd,
  kFsQuarantine,
  // A session of many commands (`vigil session`, `vigil serve`): each command's records
  // are framed by these two and carry its id in the envelope's `cmd`.
  kCommandStart,
  kCommandEnd,
  kPolicyUpdate,
  kLogTruncated,
  // Ask mode (vigil.network.ask): a request held while the session's client is asked,
  // and how the hold ended.
  kNetAsk,
  kNetAskAnswer,
  kLimitReached,
  kFsImage,
  // vigil.observer.reads: an open of a path denyRead hides (the file looked missing or
  // empty to the command), told so that the model hears why.
  kFsRead,
  // A unix socket call vigil-init brokered (network.allowUnixSockets): observer.
  kNetUnix,
  // A session's client cancelled a command (or went away while it ran): who, and how.
  kCommandCancel,
  // One request inside a TLS tunnel the proxy terminated (net.h): what was sent where.
  kNetRequest,
};

const char* to_string(Source s);
const char* to_string(Kind k);
std::optional<Kind> kind_from_string(std::string_view s);

struct Versions {
  std::string vigil, bwrap, kernel;
  bool operator==(const Versions&) const = default;
};

struct SessionStart {
  std::vector<std::string> argv;
  std::string cwd;
  std::string backend;        // "bwrap" | "seatbelt" | "none" (--sandbox off)
  std::string policy_digest;  // sha256 hex of the canonical policy JSON
  Versions versions;
  std::string log;  // where the supervisor wrote this log ("" = not recorded); the
                    // annotation's "N more: see <log>" line names it
  // log_key_id() of the key that seals this log ("" = an unkeyed log, written before
  // logs were sealed): supervisor/log/log_key.h.
  std::string key_id = {};
  // Linux: "gatekeeper" (vigil-init performs write-intent calls, 5.14+) or "best-effort"
  // (older kernels: opens are only witnessed). "" elsewhere and in older logs.
  std::string witness = {};
  // Where the session could write on the host (host_scope.h), fixed at its start: `vigil
  // undo` acts only inside it, replay --changes/--diff show only what is in it. None in
  // older logs.
  std::optional<HostScope> scope = {};
  bool operator==(const SessionStart&) const = default;
};

struct ProcExec {
  std::int64_t pid = 0;
  std::int64_t ppid = 0;
  std::vector<std::string> argv;
  std::string cwd;
  bool truncated = false;  // the observer cut argv to fit the bounds
  // What ran: /proc/PID/exe once the exec has happened (so a path swapped after it was
  // read cannot name the wrong binary), or the fd's target for an fd exec
  // ("/memfd:name (deleted)"). "" in older logs.
  std::string exe = {};
  bool operator==(const ProcExec&) const = default;
};

struct FsWrite {
  std::int64_t pid = 0;
  std::string syscall;      // one of known_write_syscalls()
  std::string path;         // as the command passed it (may be relative)
  std::string resolved;     // absolute, in the sandbox's view; "" = could not be resolved
  std::uint64_t flags = 0;  // the call's flags argument (open flags, AT_*, RENAME_*), 0 if none
  Verdict verdict = Verdict::kDenied;
  std::string reason;
  // rename*/link*: the old name; symlink*: the link's contents. "" for one-path calls.
  std::string from;
  std::string from_resolved;
  // Set by the supervisor, never by the observer: for an allowed write, the protected
  // name (a mandatory_denies() relpath) it created or changed where no mount guards it
  // (below a writable root's top level, a name that did not exist at launch). "" = none.
  std::string unguarded;
  // What the call returned, as vigil-init performed it: "0", or the errno's name
  // ("EEXIST", "EROFS"). "" in logs written before vigil-init performed calls (and for a
  // witnessed call on kernels before 5.14, whose result vigil never sees).
  std::string result = {};  // (a default member initializer: positional {..} need not name it)
  // Set by the supervisor, never by the observer: for a denied write, the
  // ignoreViolations entry that keeps it out of the block (ignore_violations.h). "" = none.
  std::string ignored = {};
  // Set by the supervisor, never by the observer: the verdict's rule id, the settings entry
  // or mandatory deny that decided (`filesystem.allowWrite[2] "~/.npm"`,
  // `mandatory deny .bashrc`: supervisor/report/policy_judge.h). "" in older logs.
  std::string rule_id = {};
  bool operator==(const FsWrite&) const = default;
};

// NetDecision, NetUpstreamFailure: supervisor/core/events/net.h (the one model, shared
// with the proxy).

struct IoStdout {
  std::string data;  // exact bytes of one chunk
  bool operator==(const IoStdout&) const = default;
};
struct IoStderr {
  std::string data;
  bool operator==(const IoStderr&) const = default;
};

struct ObserverStats {
  std::uint64_t events = 0;
  std::uint64_t dropped = 0;
  std::uint64_t held = 0;
  bool operator==(const ObserverStats&) const = default;
};

// The <sandbox_violations> block exactly as appended to the command's stderr.
struct Annotation {
  std::string text;
  bool newline_before = false;  // a "\n" was written first (stderr did not end with one)
  bool operator==(const Annotation&) const = default;
};

struct SessionEnd {
  std::optional<int> exit_code;  // exactly one of exit_code / signal
  std::optional<int> signal;
  std::uint64_t duration_ns = 0;
  std::map<std::string, std::uint64_t> counters;  // "fs.denied", "lines.forged", ...
  // Why the command ended, when vigil ended it: "limit: pids", "limit: memory",
  // "limit: timeout", ... ("" = it ended on its own).
  std::string reason = {};
  // A keyed log's seal: HMAC-SHA256 hex of this line as written without `mac`
  // (supervisor/log/log_key.h). "" in an unkeyed log.
  std::string mac = {};
  bool operator==(const SessionEnd&) const = default;
};

// What the post-run backstop (supervisor/backstop/backstop.h) found left in a writable root that
// breaks the rules (a protected name made during the session, a git hook or config key
// that runs a program) and moved into the session's quarantine. Supervisor only.
struct FsQuarantine {
  std::string path;      // where it was, absolute (host view)
  std::string rule;      // what it broke: a protected name (".vscode"), "git-hook", "git-config"
  std::string reason;    // one line for the model: why it matters
  std::string moved_to;  // where it is now; "" = it could not be moved (reason says why)
  // A config file that keeps everything else (git-config): only these lines were taken
  // out of `path` (as written), and `restore`, appended to it, puts them back
  // (`vigil undo --quarantined`); `moved_to` holds the same text. Empty: the whole thing
  // was moved.
  std::vector<std::string> removed = {};
  std::string restore = {};
  bool operator==(const FsQuarantine&) const = default;
};

// One command of a session: the envelope's `cmd` is its id.
struct CommandStart {
  std::vector<std::string> argv;
  std::string cwd;
  bool operator==(const CommandStart&) const = default;
};

// The same fields as session.end, for one command.
struct CommandEnd {
  std::optional<int> exit_code;  // exactly one of exit_code / signal
  std::optional<int> signal;
  std::uint64_t duration_ns = 0;
  std::map<std::string, std::uint64_t> counters;
  bool operator==(const CommandEnd&) const = default;
};

// The session's allowed domains changed while it ran (JSON-RPC policy.update).
struct PolicyUpdate {
  std::vector<std::string> add;     // allowedDomains entries added
  std::vector<std::string> remove;  // and removed
  bool operator==(const PolicyUpdate&) const = default;
};

// A command's output went past vigil.log.maxOutputBytes: its destination got it whole,
// the log keeps its head and its tail (issue 38.4). Logged at the command's end, between
// the head's io records and the tail's, so it marks the gap; it says how much the gap
// holds and each stream's whole size and SHA-256 (a copy kept elsewhere can be checked).
// session.end's counter io.unlogged_bytes says it too. Logs before issue 38.4 carry
// max_output_bytes alone (the cap was a head only).
struct LogTruncated {
  std::uint64_t max_output_bytes = 0;  // the cap that was reached
  std::uint64_t omitted_bytes = 0;     // left out between the head and the tail
  std::uint64_t stdout_bytes = 0;      // all the command wrote to stdout
  std::uint64_t stderr_bytes = 0;      // ... and to stderr
  // (Default member initializers: a positional {cap} need not name them.)
  std::string stdout_sha256 = {};  // lower-case hex of all of stdout ("" in old logs)
  std::string stderr_sha256 = {};
  bool operator==(const LogTruncated&) const = default;
};

// A request to a host off the allow list, held: the session's client is asked.
struct NetAsk {
  std::uint64_t ask = 0;  // numbers the session's asks; net.ask.answer names it
  NetProto proto = NetProto::kHttp;
  std::string host;
  std::uint16_t port = 0;
  std::string address;  // the first resolved address that passed the address guard
  std::uint64_t timeout_ms = 0;
  bool operator==(const NetAsk&) const = default;
};

// How a hold ended. answer: "once" | "session" | "always" | "deny" (the client's) |
// "timeout" (no answer in time: denied) | "cancelled" (the request or the session ended).
struct NetAskAnswer {
  std::uint64_t ask = 0;
  std::string answer;
  std::string entry;    // "host:port", the allowedDomains entry "session"/"always" add
  std::string written;  // "always": the settings file the entry was written into
  std::string error;    // "" or why the answer was refused (then the request is denied)
  // How the answer was given: "tty" (vigil's own terminal; `always` confirmed there) or
  // "client" (`vigil serve`'s JSON-RPC client); "" for timeout / cancelled.
  std::string via;
  bool operator==(const NetAskAnswer&) const = default;
};

// vigil ended the command at a resource cap (vigil.limits): `limit` is "pids", "memory",
// "timeout" or "file size"; `detail` says the cap in plain words. Logged before the
// annotation, whose block gets a line for it.
struct LimitReached {
  std::string limit;
  std::string detail;
  bool operator==(const LimitReached&) const = default;
};

// What one file was: before the command first changed it (phase "pre", from vigil-init,
// just before the call: observer/capture.h) or when the command had ended ("post", from
// the supervisor). Content is kept in the session's store under `sha256` when `stored`
// (supervisor/core/events/content_store.h).
struct FsImage {
  std::string phase;  // "pre" or "post"
  std::string path;   // absolute, in the sandbox's view
  std::string type;   // "file", "symlink", "other" or "absent"
  std::uint64_t size = 0;
  std::uint32_t mode = 0;  // permission bits (07777)
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  std::string sha256;  // a file's content; "" when it could not be read
  std::string target;  // a symlink's contents
  bool stored = false;
  std::string note;          // why the content was not kept ("not captured: over 16 MiB")
  bool best_effort = false;  // no gatekeeper: the file may have changed before the image
  bool operator==(const FsImage&) const = default;
};

// An open for reading of a path a denyRead rule hides (vigil.observer.reads). The call
// itself went on (the mount already hides the content: it found nothing, or an empty
// file); this is only the telling. The observer sends it; the supervisor keeps it only
// when its own plan agrees the path is hidden, and sets `reason` from that plan.
struct FsRead {
  std::int64_t pid = 0;
  std::string syscall;   // open, openat or openat2
  std::string path;      // as the command passed it
  std::string resolved;  // absolute, in the sandbox's view
  std::string reason;    // "hidden by denyRead, filesystem.denyRead[0]"
  bool operator==(const FsRead&) const = default;
};

// A unix socket connect() vigil-init performed or refused, or an AF_UNIX socket() it
// refused (network.allowUnixSockets; observer/unix_broker.h). From the observer.
struct NetUnix {
  std::int64_t pid = 0;
  std::string syscall;   // "connect" | "socket"
  std::string type;      // "SOCK_STREAM", "SOCK_DGRAM", ... ("" when not known)
  std::string path;      // as the command passed it; an abstract name as "@name"
  std::string resolved;  // the socket's canonical path ("" = none)
  NetVerdict verdict = NetVerdict::kDenied;
  std::string reason;
  std::string result;  // "0" or the errno's name
  bool operator==(const NetUnix&) const = default;
};

// A command of a session was cancelled (`vigil serve`'s cancel / $/cancelRequest, MCP's
// notifications/cancelled, or the client going away): logged when it was asked (the
// record's `t` is when), before the sandbox is stopped; the command's command.end follows.
struct CommandCancel {
  std::string by;      // "client" (it asked) | "disconnect" (it went away)
  std::string via;     // the message: "notifications/cancelled", "$/cancelRequest", "cancel", "eof"
  std::string reason;  // the client's own words, when it gave some ("" = none)
  std::uint64_t grace_ms = 0;  // SIGTERM first; SIGKILL when the sandbox is still there after this
  bool operator==(const CommandCancel&) const = default;
};

// Alternative i is Kind i.
using Body = std::variant<SessionStart, ProcExec, FsWrite, NetDecision, NetUpstreamFailure,
                          IoStdout, IoStderr, ObserverStats, Annotation, SessionEnd,
                          FsQuarantine, CommandStart, CommandEnd, PolicyUpdate, LogTruncated,
                          NetAsk, NetAskAnswer, LimitReached, FsImage, FsRead, NetUnix,
                          CommandCancel, NetRequest>;

Kind kind_of(const Body& b);

struct Event {
  std::uint64_t seq = 0;
  std::uint64_t t = 0;  // ns since the session started
  std::string session;
  Source src = Source::kSupervisor;
  std::string prev;  // sha256 hex of the previous record's line (kGenesisPrev for seq 0)
  // The command of a session the record belongs to (command.start's id); none for the
  // session's own records and in a one-command log (`vigil run`).
  std::optional<std::uint64_t> cmd;
  Body body;

  Kind kind() const { return kind_of(body); }
  bool operator==(const Event&) const = default;
};

struct Limits {
  std::size_t max_line = 64 * 1024;
  std::size_t max_path = 4096;       // path, resolved, cwd, from
  std::size_t max_argv = 256;        // entries
  std::size_t max_arg = 16 * 1024;   // bytes per argv entry
  std::size_t max_text = 1024;       // reason, rule, host, syscall, ... (model-facing lines)
  std::size_t max_data = 64 * 1024;  // io chunk, annotation text
  std::size_t max_counters = 64;
  int max_depth = 4;  // JSON nesting

  // What the sandbox may send (the defaults above).
  static Limits untrusted() { return Limits{}; }
  // What a log record may hold: the supervisor's own records (argv of the command,
  // io chunks, the annotation) are larger than anything the observer may send.
  static Limits log();
};

// A line from the observer, without its newline. On success the body the sandbox
// described; the caller (the event hub) adds the envelope via SessionLog::append with
// Source::kObserver. Errors, by Errc:
//   kRefused      forged: sets seq/t/session/prev/src/cmd, or claims a kind the observer
//                 never produces (session.*, net.*, io.*, annotation)
//   kUnsupported  unknown kind, or a schema version other than 1
//   kInvalidPolicy  anything else malformed (the input is wrong)
// Messages are one line, bounded, and quote no raw input bytes.
Result<Body> parse_untrusted_event_line(std::string_view line,
                                        const Limits& limits = Limits::untrusted());

enum class LineFault { kMalformed, kForged, kUnsupported };
LineFault fault_of(const Error& e);

// A record read back from a session log: every envelope field required, any kind, and
// the line must be exactly serialize() of what it parses to (canonical), so a log that
// was rewritten by hand shows even where its chain was recomputed.
Result<Event> parse_log_record(std::string_view line, const Limits& limits = Limits::log());

// Checks sizes and values that the types cannot (path bounds, NUL bytes, port ranges).
Result<void> validate(const Body& b, const Limits& limits);

// The canonical line (no trailing newline): keys in a fixed order (v, seq, t, session,
// src, kind, the kind's fields, prev), optional fields omitted when empty, non-ASCII
// escaped as \uXXXX so a log is pure ASCII and safe to print to a terminal as JSON.
std::string serialize(const Event& e);

// Splits a byte stream from the sandbox into lines, never buffering more than
// `max_line` bytes: a longer line is discarded up to its newline and counted.
// Not thread-safe; one per stream.
class LineSplitter {
 public:
  explicit LineSplitter(std::size_t max_line = Limits{}.max_line) : max_line_(max_line) {}
  // Calls on_line(std::string_view) for each complete line (without '\n').
  template <class F>
  void feed(std::string_view bytes, F&& on_line) {
    while (!bytes.empty()) {
      const std::size_t nl = bytes.find('\n');
      const std::string_view part = bytes.substr(0, nl);
      if (!skipping_) {
        if (buf_.size() + part.size() > max_line_) {
          skipping_ = true;
          buf_.clear();
          ++oversize_;
        } else {
          buf_.append(part);
        }
      }
      if (nl == std::string_view::npos) return;
      if (!skipping_) on_line(std::string_view(buf_));
      buf_.clear();
      skipping_ = false;
      bytes.remove_prefix(nl + 1);
    }
  }
  // Bytes of an unterminated last line (the stream ended mid-line): malformed.
  bool has_partial() const { return !buf_.empty() || skipping_; }
  std::uint64_t oversize() const { return oversize_; }

 private:
  std::size_t max_line_;
  std::string buf_;
  bool skipping_ = false;
  std::uint64_t oversize_ = 0;
};

// Write-intent syscalls the observer may name (DESIGN.md §6, plus the fd-based
// variants). A name outside this set is malformed: it would reach the model's text.
bool is_known_write_syscall(std::string_view name);
// fs.write.result: "0" or an errno name.
bool is_call_result(std::string_view s);

// WriteAction and write_action(): supervisor/core/events/write_action.h.

// Byte-string helpers (also used by the annotation and the replay views).
using vigil::is_valid_utf8;  // core/display_text: the one UTF-8 validator
using vigil::base64_decode;  // core/base/base64: the one base64 (strict, canonical only)
using vigil::base64_encode;

// The display escapes of replay's text and HTML views: escape_text() (the one escaping
// function, supervisor/core/base/display_text.h) with TextSink::kTerminal / kHtml.
std::string escape_for_terminal(std::string_view bytes);
std::string escape_for_html(std::string_view bytes);

}  // namespace vigil::events
