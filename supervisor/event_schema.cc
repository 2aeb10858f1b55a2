#include "supervisor/event_schema.h"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <span>
#include <type_traits>
#include <utility>

#include "supervisor/core/bounded_json.h"
#include "supervisor/core/display_text.h"
#include "supervisor/core/mandatory_denies.h"
#include "supervisor/core/syscall_table.h"

namespace vigil::events {
namespace {

using json = nlohmann::json;           // parsing: order does not matter
using ojson = nlohmann::ordered_json;  // serialising: the canonical key order

template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <class... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

constexpr std::array<const char*, 20> kKindNames = {
    "session.start",        "proc.exec",     "fs.write",      "net.decision",
    "net.upstream_failure", "io.stdout",     "io.stderr",     "observer.stats",
    "annotation",           "session.end",   "fs.quarantine", "command.start",
    "command.end",          "policy.update", "log.truncated", "net.ask",
    "net.ask.answer",       "limit.reached", "fs.image",      "fs.read",
};
static_assert(std::variant_size_v<Body> == kKindNames.size());

constexpr std::int64_t kMaxPid = 4194304;  // PID_MAX_LIMIT on 64-bit Linux

Result<json> parse_bounded(std::string_view line, int max_depth) {
  // Bounded nesting, duplicate keys refused (supervisor/core/bounded_json.h).
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

// A bounded, one-line rendering of a key the sandbox chose, for an error message.
std::string quote_key(std::string_view key) {
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

bool is_hex64(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// Session ids and counter names end up in file names and report keys.
bool is_token(std::string_view s, std::size_t max) {
  return !s.empty() && s.size() <= max && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
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

Result<Body> read_body(Kind kind, Reader& r, const Limits& lim) {
  switch (kind) {
    case Kind::kSessionStart: {
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
      return Body{std::move(b)};
    }
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
    case Kind::kFsWrite: {
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
      if (!r.failed()) {
        if (auto v = fs_verdict_from(verdict)) {
          b.verdict = *v;
        } else {
          r.fail(Errc::kInvalidPolicy, "verdict: expected allowed, denied or ephemeral");
        }
      }
      return Body{std::move(b)};
    }
    case Kind::kNetDecision: {
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
    case Kind::kNetUpstreamFailure: {
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
    case Kind::kFsQuarantine: {
      FsQuarantine b;
      b.path = r.bytes("path", lim.max_path);
      b.rule = r.bytes("rule", lim.max_text);
      b.reason = r.bytes("reason", lim.max_text);
      b.moved_to = r.bytes("moved_to", lim.max_path, false);
      return Body{std::move(b)};
    }
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
      return Body{LogTruncated{r.count("max_output_bytes")}};
    case Kind::kNetAsk: {
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
    case Kind::kNetAskAnswer: {
      NetAskAnswer b;
      b.ask = r.count("ask");
      b.answer = r.word("answer");
      b.entry = r.bytes("entry", lim.max_text, false);
      b.written = r.bytes("written", lim.max_path, false);
      b.error = r.bytes("error", lim.max_text, false);
      return Body{std::move(b)};
    }
    case Kind::kLimitReached: {
      LimitReached b;
      b.limit = r.bytes("limit", lim.max_text);
      b.detail = r.bytes("detail", lim.max_text);
      return Body{std::move(b)};
    }
    case Kind::kFsImage: {
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
    case Kind::kFsRead: {
      FsRead b;
      b.pid = r.integer("pid", 1, kMaxPid);
      b.syscall = r.word("syscall");
      b.path = r.bytes("path", lim.max_path);
      b.resolved = r.bytes("resolved", lim.max_path);
      b.reason = r.bytes("reason", lim.max_text);
      return Body{std::move(b)};
    }
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

void put_body(ojson& j, const Body& body, bool legacy) {
  std::visit(Overloaded{
                 [&](const SessionStart& b) {
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
                 },
                 [&](const ProcExec& b) {
                   j["pid"] = b.pid;
                   j["ppid"] = b.ppid;
                   j["argv"] = bytes_array_json(b.argv);
                   j["cwd"] = bytes_json(b.cwd);
                   if (b.truncated) j["truncated"] = true;
                   if (!b.exe.empty()) j["exe"] = bytes_json(b.exe);
                 },
                 [&](const FsWrite& b) {
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
                 },
                 [&](const NetDecision& b) {
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
                 },
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
                 [&](const LogTruncated& b) { j["max_output_bytes"] = b.max_output_bytes; },
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
                 },
                 [&](const LimitReached& b) {
                   j["limit"] = bytes_json(b.limit);
                   j["detail"] = bytes_json(b.detail);
                 },
                 [&](const FsImage& b) {
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
                 },
                 [&](const FsRead& b) {
                   j["pid"] = b.pid;
                   j["syscall"] = b.syscall;
                   j["path"] = bytes_json(b.path);
                   j["resolved"] = bytes_json(b.resolved);
                   j["reason"] = bytes_json(b.reason);
                 },
             },
             body);
}

}  // namespace

// serialize(), or (legacy) with output chunks as text whenever they are valid UTF-8, as
// logs written before data_json() had them.
std::string serialize_as(const Event& e, bool legacy);

// ---------------------------------------------------------------------------------------

const char* to_string(Source s) {
  switch (s) {
    case Source::kObserver:
      return "observer";
    case Source::kProxy:
      return "proxy";
    case Source::kSupervisor:
      return "supervisor";
  }
  return "?";
}

const char* to_string(Kind k) {
  const auto i = static_cast<std::size_t>(k);
  return i < kKindNames.size() ? kKindNames[i] : "?";
}

std::optional<Kind> kind_from_string(std::string_view s) {
  for (std::size_t i = 0; i < kKindNames.size(); ++i) {
    if (s == kKindNames[i]) return static_cast<Kind>(i);
  }
  return std::nullopt;
}

Kind kind_of(const Body& b) { return static_cast<Kind>(b.index()); }

Limits Limits::log() {
  Limits l;
  l.max_line = 8 * 1024 * 1024;
  l.max_argv = 4096;
  l.max_arg = 128 * 1024;
  l.max_data = 1024 * 1024;
  l.max_text = 4096;
  return l;
}

namespace {

// The plain word the model is shown for a write (the syscall stays in the log). Linux
// calls take theirs from the one syscall table's action word (core/syscall_table.h);
// the Seatbelt operations a macOS kernel report names (supervisor/macos_session.h), where
// no syscall is known, are listed here.
struct WriteName {
  std::string_view name;
  WriteAction action;
};
constexpr WriteName kTableWords[] = {
    {"write", WriteAction::kWrite},         {"truncate", WriteAction::kWrite},
    {"create", WriteAction::kCreate},       {"mkdir", WriteAction::kCreate},
    {"mknod", WriteAction::kCreate},        {"delete", WriteAction::kDelete},
    {"rmdir", WriteAction::kDelete},        {"rename", WriteAction::kRename},
    {"link", WriteAction::kLink},           {"symlink", WriteAction::kLink},
    {"chmod", WriteAction::kChangeMode},    {"chown", WriteAction::kChangeOwner},
    {"touch", WriteAction::kChangeTimes},   {"xattr", WriteAction::kChangeAttributes},
};
constexpr WriteName kSeatbelt[] = {
    {"file-write-create", WriteAction::kCreate},
    {"file-write-data", WriteAction::kWrite},
    {"file-write-flags", WriteAction::kChangeAttributes},
    {"file-write-mode", WriteAction::kChangeMode},
    {"file-write-owner", WriteAction::kChangeOwner},
    {"file-write-setugid", WriteAction::kChangeMode},
    {"file-write-times", WriteAction::kChangeTimes},
    {"file-write-unlink", WriteAction::kDelete},
    {"file-write-xattr", WriteAction::kChangeAttributes},
    {"file-link", WriteAction::kLink},
};

std::optional<WriteAction> lookup(std::span<const WriteName> table, std::string_view name) {
  for (const auto& w : table)
    if (w.name == name) return w.action;
  return std::nullopt;
}

// The action of a known write name; nullopt when vigil does not accept the name.
std::optional<WriteAction> base_action(std::string_view name) {
  // Linux: exactly the calls of the one syscall table, execs aside (they are proc.exec).
  if (const WriteSyscall* row = find_write_syscall(name)) {
    if (row->emulation == Emulation::kExec) return std::nullopt;
    return lookup(kTableWords, row->action).value_or(WriteAction::kWrite);
  }
  return lookup(kSeatbelt, name);
}

}  // namespace

bool is_known_write_syscall(std::string_view name) { return base_action(name).has_value(); }

bool is_call_result(std::string_view s) {
  if (s == "0") return true;
  // An errno name: E and upper-case letters or digits (E2BIG), nothing else.
  return s.size() >= 2 && s.size() <= 32 && s[0] == 'E' &&
         std::all_of(s.begin() + 1, s.end(), [](char c) {
           return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
         });
}

WriteAction write_action(std::string_view syscall, std::uint64_t flags) {
  const std::optional<WriteAction> a = base_action(syscall);
  if (!a) return WriteAction::kWrite;
  // O_CREAT|O_EXCL (0100|0200 on every Linux ABI vigil runs on) is sure to create; O_CREAT
  // alone also opens an existing file (`>>`, touch), which is a write.
  if (*a == WriteAction::kWrite && syscall.starts_with("open") && (flags & 0300U) == 0300U)
    return WriteAction::kCreate;
  return *a;
}

const char* to_string(WriteAction a) {
  switch (a) {
    case WriteAction::kWrite:
      return "write";
    case WriteAction::kCreate:
      return "create";
    case WriteAction::kDelete:
      return "delete";
    case WriteAction::kRename:
      return "rename";
    case WriteAction::kLink:
      return "link";
    case WriteAction::kChangeMode:
      return "change mode";
    case WriteAction::kChangeOwner:
      return "change owner";
    case WriteAction::kChangeTimes:
      return "change times";
    case WriteAction::kChangeAttributes:
      return "change attributes";
    case WriteAction::kRead:
      return "read";
  }
  return "write";
}

Result<void> validate(const Body& body, const Limits& lim) {
  auto bad = [](std::string why) -> Result<void> {
    return make_error(Errc::kInvalidPolicy, std::move(why));
  };
  auto no_nul = [](const std::string& s) { return s.find('\0') == std::string::npos; };
  auto path_ok = [&](const std::string& s) { return s.size() <= lim.max_path && no_nul(s); };
  auto text_ok = [&](const std::string& s) { return s.size() <= lim.max_text && no_nul(s); };
  auto argv_ok = [&](const std::vector<std::string>& v) {
    return v.size() <= lim.max_argv && std::all_of(v.begin(), v.end(), [&](const std::string& a) {
             return a.size() <= lim.max_arg && no_nul(a);
           });
  };
  auto ending_ok = [&](const auto& b) -> Result<void> {
    if (b.exit_code.has_value() == b.signal.has_value())
      return bad("exactly one of exit_code and signal");
    if (b.exit_code && (*b.exit_code < 0 || *b.exit_code > 255)) return bad("exit_code out of range");
    if (b.signal && (*b.signal < 1 || *b.signal > 64)) return bad("signal out of range");
    if (b.counters.size() > lim.max_counters) return bad("counters: too many entries");
    for (const auto& [k, v] : b.counters) {
      if (!is_token(k, 64)) return bad("counters: bad name");
    }
    return {};
  };
  return std::visit(
      Overloaded{
          [&](const SessionStart& b) -> Result<void> {
            if (!argv_ok(b.argv)) return bad("argv: too many or too long entries, or a NUL byte");
            if (!path_ok(b.cwd) || !path_ok(b.log)) return bad("cwd/log: too long or a NUL byte");
            if (!b.witness.empty() && b.witness != "gatekeeper" && b.witness != "best-effort")
              return bad("witness: expected gatekeeper or best-effort");
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
          },
          [&](const ProcExec& b) -> Result<void> {
            if (b.pid < 1 || b.pid > kMaxPid || b.ppid < 0 || b.ppid > kMaxPid)
              return bad("pid out of range");
            if (!argv_ok(b.argv)) return bad("argv: too many or too long entries, or a NUL byte");
            if (!path_ok(b.cwd) || !path_ok(b.exe)) return bad("cwd/exe: too long or a NUL byte");
            return {};
          },
          [&](const FsWrite& b) -> Result<void> {
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
            return {};
          },
          [&](const NetDecision& b) -> Result<void> {
            if (!text_ok(b.host) || !text_ok(b.rule) || !text_ok(b.reason) ||
                !text_ok(b.refused_by) || !text_ok(b.address) || !text_ok(b.guard_check)) {
              return bad("net.decision: a field is too long or has a NUL byte");
            }
            if (!b.ignored.empty() && (b.verdict != NetVerdict::kDenied || !text_ok(b.ignored)))
              return bad("ignored: only on a denied connection, one line");
            return {};
          },
          [&](const NetUpstreamFailure& b) -> Result<void> {
            if (!text_ok(b.host) || !text_ok(b.address) || !text_ok(b.what)) {
              return bad("net.upstream_failure: a field is too long or has a NUL byte");
            }
            return {};
          },
          [&](const IoStdout& b) -> Result<void> {
            return b.data.size() <= lim.max_data ? Result<void>() : bad("data: chunk too large");
          },
          [&](const IoStderr& b) -> Result<void> {
            return b.data.size() <= lim.max_data ? Result<void>() : bad("data: chunk too large");
          },
          [&](const ObserverStats&) -> Result<void> { return {}; },
          [&](const Annotation& b) -> Result<void> {
            if (b.text.size() > lim.max_data || !no_nul(b.text))
              return bad("text: too long or a NUL byte");
            return {};
          },
          [&](const FsQuarantine& b) -> Result<void> {
            if (!path_ok(b.path) || !path_ok(b.moved_to))
              return bad("path: longer than the limit or a NUL byte");
            if (b.path.empty() || b.path[0] != '/') return bad("path: must be absolute");
            if (!b.moved_to.empty() && b.moved_to[0] != '/') return bad("moved_to: must be absolute");
            if (!text_ok(b.rule) || !text_ok(b.reason)) return bad("rule, reason: too long or a NUL byte");
            return {};
          },
          [&](const SessionEnd& b) -> Result<void> {
            if (auto r = ending_ok(b); !r) return r;
            if (b.reason.size() > lim.max_text || !no_nul(b.reason))
              return bad("reason: too long or a NUL byte");
            if (!b.mac.empty() && !is_hex64(b.mac)) return bad("mac: expected 64 lower-case hex digits");
            return {};
          },
          [&](const CommandStart& b) -> Result<void> {
            if (!argv_ok(b.argv)) return bad("argv: too many or too long entries, or a NUL byte");
            if (!path_ok(b.cwd)) return bad("cwd: too long or a NUL byte");
            return {};
          },
          [&](const CommandEnd& b) -> Result<void> { return ending_ok(b); },
          [&](const PolicyUpdate& b) -> Result<void> {
            for (const auto* list : {&b.add, &b.remove}) {
              if (list->size() > lim.max_argv || !std::all_of(list->begin(), list->end(), text_ok))
                return bad("add/remove: too many or too long entries, or a NUL byte");
            }
            return {};
          },
          [&](const LogTruncated&) -> Result<void> { return {}; },
          [&](const NetAsk& b) -> Result<void> {
            if (!text_ok(b.host) || !text_ok(b.address)) return bad("host/address: too long or a NUL byte");
            return {};
          },
          [&](const NetAskAnswer& b) -> Result<void> {
            static constexpr std::string_view kAnswers[] = {"once", "session", "always",
                                                            "deny", "timeout", "cancelled"};
            if (std::find(std::begin(kAnswers), std::end(kAnswers), b.answer) == std::end(kAnswers))
              return bad("answer: expected once, session, always, deny, timeout or cancelled");
            if (!text_ok(b.entry) || !path_ok(b.written) || !text_ok(b.error))
              return bad("entry/written/error: too long or a NUL byte");
            return {};
          },
          [&](const LimitReached& b) -> Result<void> {
            if (!text_ok(b.limit) || !text_ok(b.detail) || b.limit.empty())
              return bad("limit, detail: empty, too long or a NUL byte");
            return {};
          },
          [&](const FsImage& b) -> Result<void> {
            if (b.phase != "pre" && b.phase != "post") return bad("phase: expected pre or post");
            if (!path_ok(b.path) || b.path.empty() || b.path[0] != '/')
              return bad("path: absolute, within the limit, no NUL byte");
            if (b.type != "file" && b.type != "symlink" && b.type != "other" && b.type != "absent")
              return bad("type: expected file, symlink, other or absent");
            if (!b.sha256.empty() && !is_hex64(b.sha256))
              return bad("sha256: expected 64 lower-case hex digits");
            if (b.stored && b.sha256.empty()) return bad("stored: needs sha256");
            if (!path_ok(b.target) || !text_ok(b.note)) return bad("target/note: too long or a NUL byte");
            return {};
          },
          [&](const FsRead& b) -> Result<void> {
            if (b.pid < 1 || b.pid > kMaxPid) return bad("pid out of range");
            const WriteSyscall* row = find_write_syscall(b.syscall);
            if (row == nullptr || row->emulation != Emulation::kOpen || b.syscall == "creat")
              return bad("syscall: expected open, openat or openat2");
            if (!path_ok(b.path) || !path_ok(b.resolved))
              return bad("path: longer than the limit or a NUL byte");
            if (b.resolved.empty() || b.resolved[0] != '/') return bad("resolved: must be absolute");
            if (!text_ok(b.reason)) return bad("reason: too long or a NUL byte");
            return {};
          },
      },
      body);
}

Result<Body> parse_untrusted_event_line(std::string_view line, const Limits& lim) {
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
      *kind != Kind::kFsRead && !pre_image) {
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

std::string base64_encode(std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= in.size(); i += 3) {
    const std::uint32_t v = (std::uint32_t{static_cast<unsigned char>(in[i])} << 16) |
                            (std::uint32_t{static_cast<unsigned char>(in[i + 1])} << 8) |
                            std::uint32_t{static_cast<unsigned char>(in[i + 2])};
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  const std::size_t rest = in.size() - i;
  if (rest > 0) {
    std::uint32_t v = std::uint32_t{static_cast<unsigned char>(in[i])} << 16;
    if (rest == 2) v |= std::uint32_t{static_cast<unsigned char>(in[i + 1])} << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view in) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  if (in.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(in.size() / 4 * 3);
  for (std::size_t i = 0; i < in.size(); i += 4) {
    const bool last = i + 4 == in.size();
    int pad = 0;
    if (last && in[i + 3] == '=') pad = in[i + 2] == '=' ? 2 : 1;
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const int d = k >= 4 - static_cast<std::size_t>(pad) ? 0 : value(in[i + k]);
      if (d < 0) return std::nullopt;
      v = (v << 6) | static_cast<std::uint32_t>(d);
    }
    // Canonical only: the bits below the last whole byte must be zero, so one byte
    // string has exactly one encoding (the log's lines are compared byte for byte).
    if ((pad == 1 && (v & 0xffU) != 0) || (pad == 2 && (v & 0xffffU) != 0)) return std::nullopt;
    out += static_cast<char>((v >> 16) & 0xffU);
    if (pad < 2) out += static_cast<char>((v >> 8) & 0xffU);
    if (pad < 1) out += static_cast<char>(v & 0xffU);
  }
  return out;
}

// One home for the escaping: supervisor/core/display_text.h.
std::string escape_for_terminal(std::string_view s) { return escape_text(s, TextSink::kTerminal); }

std::string escape_for_html(std::string_view s) { return escape_text(s, TextSink::kHtml); }

}  // namespace vigil::events
