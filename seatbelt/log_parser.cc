#include "seatbelt/log_parser.h"

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>

#include "seatbelt/profile_builder.h"

namespace vigil {
namespace {

// The kernel names a process by p_name (at most 32 bytes); a candidate split that puts
// more than this before "(PID) deny(" is reading a target, not a process name.
constexpr std::size_t kMaxProcessNameBytes = 64;
constexpr std::string_view kSandboxPrefix = "Sandbox: ";

Error bad(std::string what) {
  return make_error(Errc::kInvalidPolicy, "seatbelt log: " + std::move(what));
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_op_char(char c) {
  return (c >= 'a' && c <= 'z') || is_digit(c) || c == '-' || c == '*' || c == '_';
}

// Digits at s[i..), at most `max` of them, as a number; nullopt when there are none or
// too many (so no overflow is possible).
std::optional<std::uint64_t> digits_at(std::string_view s, std::size_t i, std::size_t max,
                                       std::size_t* end) {
  std::size_t j = i;
  while (j < s.size() && is_digit(s[j])) ++j;
  if (j == i || j - i > max) return std::nullopt;
  std::uint64_t v = 0;
  std::from_chars(s.data() + i, s.data() + j, v);
  *end = j;
  return v;
}

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

bool starts_like_report(std::string_view message) {
  if (message.starts_with(kSandboxPrefix)) return true;
  std::size_t end = 0;
  if (!digits_at(message, 0, 10, &end)) return false;
  return message.substr(end).starts_with(" duplicate report");
}

// A network target: "1.2.3.4:443", "[::1]:443", "*:443", with an optional "remote:" or
// "local:" in front. False when it is not host:port (a unix socket path, say).
bool split_host_port(std::string_view t, std::string* host, std::uint16_t* port) {
  for (const std::string_view side : {"remote:", "local:"}) {
    if (t.starts_with(side)) t.remove_prefix(side.size());
  }
  const auto colon = t.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  std::size_t end = 0;
  const auto p = digits_at(t, colon + 1, 5, &end);
  if (!p || end != t.size() || *p > 65535) return false;
  std::string_view h = t.substr(0, colon);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  if (h.empty()) return false;
  const bool plain = std::all_of(h.begin(), h.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '.' ||
           c == ':' || c == '-' || c == '*' || c == '%';
  });
  if (!plain) return false;
  *host = std::string(h);
  *port = static_cast<std::uint16_t>(*p);
  return true;
}

void classify_target(SeatbeltViolation* v) {
  if (v->target.empty()) {
    v->kind = SeatbeltViolation::Target::kNone;
  } else if (v->target[0] == '/') {
    v->kind = SeatbeltViolation::Target::kPath;
  } else if (v->operation.starts_with("network-") &&
             split_host_port(v->target, &v->host, &v->port)) {
    v->kind = SeatbeltViolation::Target::kHostPort;
  } else {
    v->kind = SeatbeltViolation::Target::kName;
  }
}

// The last path component of an image path ("/System/.../Sandbox" -> "Sandbox").
std::string_view basename_of(std::string_view p) {
  const auto slash = p.rfind('/');
  return slash == std::string_view::npos ? p : p.substr(slash + 1);
}

// ---- text styles: where the header ends and who wrote the line ----

struct TextHeader {
  bool kernel = false;       // written by the kernel (process "kernel", pid 0 where shown)
  std::string_view message;  // what follows the header
};

bool is_date_at_start(std::string_view s) {
  // YYYY-MM-DD followed by a space
  if (s.size() < 11) return false;
  for (std::size_t i = 0; i < 10; ++i) {
    const bool want_dash = i == 4 || i == 7;
    if (want_dash ? s[i] != '-' : !is_digit(s[i])) return false;
  }
  return s[10] == ' ';
}

// Next space-separated token of s at *pos (runs of spaces collapse).
std::string_view next_token(std::string_view s, std::size_t* pos) {
  while (*pos < s.size() && s[*pos] == ' ') ++*pos;
  const std::size_t start = *pos;
  while (*pos < s.size() && s[*pos] != ' ') ++*pos;
  return s.substr(start, *pos - start);
}

// "NAME[PID:TID]", "NAME[PID]" or "NAME[PID]:" -> NAME and PID.
bool bracket_process(std::string_view tok, std::string_view* name, std::uint64_t* pid) {
  if (tok.ends_with(':')) tok.remove_suffix(1);
  if (!tok.ends_with(']')) return false;
  const auto open = tok.find('[');
  if (open == std::string_view::npos || open == 0) return false;
  std::size_t end = 0;
  const auto p = digits_at(tok, open + 1, 10, &end);
  if (!p || (tok[end] != ':' && tok[end] != ']')) return false;
  *name = tok.substr(0, open);
  *pid = *p;
  return true;
}

// compact:  DATE TIME TYPE kernel[0:1a2b] (Sandbox) MESSAGE
// syslog:   DATE TIME HOST kernel[0]: (Sandbox) MESSAGE
// default:  DATE TIME 0xTID TYPE 0xACTIVITY PID TTL kernel: (Sandbox) MESSAGE
// console:  TYPE<TAB>TIME<TAB>kernel<TAB>MESSAGE (Console.app's copy)
std::optional<TextHeader> parse_text_header(std::string_view line) {
  TextHeader h;
  if (is_date_at_start(line)) {
    std::size_t pos = 0;
    next_token(line, &pos);                   // date
    next_token(line, &pos);                   // time (and zone)
    std::uint64_t first_number = UINT64_MAX;  // default style: the PID column
    for (int i = 0; i < 7; ++i) {
      const std::string_view tok = next_token(line, &pos);
      if (tok.empty()) return std::nullopt;
      std::string_view name;
      std::uint64_t pid = 0;
      if (bracket_process(tok, &name, &pid)) {
        h.kernel = name == "kernel" && pid == 0;
      } else if (tok.size() > 1 && tok.back() == ':' && first_number != UINT64_MAX) {
        h.kernel = tok == "kernel:" && first_number == 0;
      } else {
        std::size_t end = 0;
        const auto n = digits_at(tok, 0, 10, &end);
        if (n && end == tok.size() && first_number == UINT64_MAX)
          first_number = *n;  // PID, then TTL
        continue;
      }
      // The message: skip one space, then an optional "(Library) ".
      std::string_view rest = line.substr(std::min(pos + 1, line.size()));
      if (rest.starts_with("(")) {
        const auto close = rest.find(") ");
        if (close != std::string_view::npos && close < 64) rest.remove_prefix(close + 2);
      }
      h.message = rest;
      return h;
    }
    return std::nullopt;
  }
  for (const std::string_view type : {"error\t", "default\t", "info\t", "debug\t", "fault\t"}) {
    if (!line.starts_with(type)) continue;
    std::string_view rest = line.substr(type.size());
    const auto t1 = rest.find('\t');
    if (t1 == std::string_view::npos) return std::nullopt;
    rest.remove_prefix(t1 + 1);
    const auto t2 = rest.find('\t');
    if (t2 == std::string_view::npos) return std::nullopt;
    h.kernel = rest.substr(0, t2) == "kernel";
    h.message = rest.substr(t2 + 1);
    return h;
  }
  return std::nullopt;
}

// Lines of `log stream`'s own, not events: they end whatever message was open.
bool is_banner(std::string_view line) {
  return line.starts_with("Filtering the log data") || line.starts_with("Timestamp ") ||
         line.starts_with("Timestamp\t");
}

}  // namespace

Result<SeatbeltViolation> parse_sandbox_report(std::string_view report) {
  if (report.size() > kMaxLogLineBytes)
    return bad("report longer than " + std::to_string(kMaxLogLineBytes) + " bytes");
  if (report.find('\0') != std::string_view::npos) return bad("NUL byte in report");
  SeatbeltViolation v;
  std::size_t end = 0;
  if (const auto n = digits_at(report, 0, 9, &end)) {
    std::string_view rest = report.substr(end);
    std::string_view lead;
    for (const std::string_view form : {" duplicate reports for ", " duplicate report for "}) {
      if (rest.starts_with(form)) lead = form;
    }
    if (lead.empty() || *n == 0) return bad("expected \"N duplicate reports for Sandbox: ...\"");
    v.count = static_cast<std::uint32_t>(*n);
    report = rest.substr(lead.size());
  }
  if (!report.starts_with(kSandboxPrefix)) return bad("expected \"Sandbox: \"");
  const std::string_view body = report.substr(kSandboxPrefix.size());

  // PROCESS(PID) deny(N) OPERATION[ TARGET]. The process name may itself contain
  // parentheses, and the target is chosen by the sandboxed command, so every split that
  // fits the grammar is collected: exactly one must exist within the name's reach.
  struct Split {
    std::size_t name_len, pid, op_begin, op_end;
  };
  std::vector<Split> splits;
  for (std::size_t open = body.find('(');
       open != std::string_view::npos && open <= kMaxProcessNameBytes;
       open = body.find('(', open + 1)) {
    if (open == 0) continue;
    std::size_t e = 0;
    const auto pid = digits_at(body, open + 1, 10, &e);
    if (!pid || *pid == 0 || *pid > 0x7fffffff) continue;
    std::string_view rest = body.substr(e);
    if (!rest.starts_with(") deny(")) continue;
    std::size_t e2 = 0;
    if (!digits_at(body, e + 7, 6, &e2) || body.substr(e2).substr(0, 2) != ") ") continue;
    const std::size_t op_begin = e2 + 2;
    std::size_t op_end = op_begin;
    while (op_end < body.size() && is_op_char(body[op_end])) ++op_end;
    if (op_end == op_begin || (op_end < body.size() && body[op_end] != ' ')) continue;
    splits.push_back(Split{open, static_cast<std::size_t>(*pid), op_begin, op_end});
  }
  if (splits.empty()) return bad("no \"PROCESS(PID) deny(N) OPERATION\" in report");
  if (splits.size() > 1) {
    return bad("ambiguous report: a process name or target imitates the report grammar");
  }
  const Split& s = splits.front();
  v.process = std::string(body.substr(0, s.name_len));
  v.pid = static_cast<std::int64_t>(s.pid);
  v.operation = std::string(body.substr(s.op_begin, s.op_end - s.op_begin));
  if (s.op_end < body.size()) v.target = std::string(body.substr(s.op_end + 1));
  classify_target(&v);
  return v;
}

SeatbeltLogReader::SeatbeltLogReader(std::string tag) : tag_(std::move(tag)) {}

// A whole event message: "REPORT\nTAG". The tag is the last line because the kernel
// appends the rule's message after the report; anything before it, newlines included,
// belongs to the report (a path may contain newlines, even another session's tag).
Result<SeatbeltLogEvent> SeatbeltLogReader::from_message(std::string_view message) const {
  SeatbeltLogEvent ev;
  if (!starts_like_report(message)) return ev;  // kIgnored
  const auto nl = message.rfind('\n');
  if (nl == std::string_view::npos || trim_right(message.substr(nl + 1)) != tag_ || tag_.empty()) {
    ev.kind = SeatbeltLogEvent::Kind::kOtherSession;
    return ev;
  }
  auto v = parse_sandbox_report(message.substr(0, nl));
  VIGIL_TRY(v);
  ev.kind = SeatbeltLogEvent::Kind::kViolation;
  ev.violation = std::move(v).value();
  return ev;
}

std::optional<Result<SeatbeltLogEvent>> SeatbeltLogReader::flush_pending() {
  if (!pending_) return std::nullopt;
  pending_ = false;
  std::string message = std::move(pending_report_);
  for (auto& more : pending_more_) {
    message += '\n';
    message += more;
  }
  pending_report_.clear();
  pending_more_.clear();
  pending_bytes_ = 0;
  if (message.size() > kMaxLogLineBytes)
    return Result<SeatbeltLogEvent>(bad("report spans too many bytes"));
  return from_message(message);
}

std::vector<Result<SeatbeltLogEvent>> SeatbeltLogReader::feed(std::string_view line) {
  std::vector<Result<SeatbeltLogEvent>> out;
  auto push_pending = [&] {
    if (auto p = flush_pending()) out.push_back(std::move(*p));
  };
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.size() > kMaxLogLineBytes) {
    push_pending();
    out.emplace_back(bad("line longer than " + std::to_string(kMaxLogLineBytes) + " bytes"));
    return out;
  }

  if (line.starts_with("{")) {
    push_pending();
    // ndjson. Parsed without exceptions; a malformed line is an error value.
    const auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      out.emplace_back(bad("not a JSON object"));
      return out;
    }
    SeatbeltLogEvent ev;
    const auto type = j.find("eventType");
    if (type == j.end() || !type->is_string()) {
      out.emplace_back(bad("event without an eventType"));
      return out;
    }
    if (type->get_ref<const std::string&>() == "lossEvent") {
      ev.kind = SeatbeltLogEvent::Kind::kLoss;
      out.emplace_back(std::move(ev));
      return out;
    }
    const auto msg = j.find("eventMessage");
    const auto proc = j.find("processImagePath");
    const auto sender = j.find("senderImagePath");
    if (type->get_ref<const std::string&>() != "logEvent") {
      out.emplace_back(std::move(ev));  // activity, signpost, ...: kIgnored
      return out;
    }
    if (msg == j.end() || !msg->is_string()) {
      out.emplace_back(bad("log event without a string eventMessage"));
      return out;
    }
    const std::string& message = msg->get_ref<const std::string&>();
    // Only the kernel's Sandbox extension writes reports; a process logging text that
    // looks like one is not the kernel, whatever its message says.
    const bool from_sandbox_kext = proc != j.end() && proc->is_string() && sender != j.end() &&
                                   sender->is_string() &&
                                   basename_of(proc->get_ref<const std::string&>()) == "kernel" &&
                                   basename_of(sender->get_ref<const std::string&>()) == "Sandbox";
    if (!from_sandbox_kext) {
      out.emplace_back(std::move(ev));
      return out;
    }
    if (message.size() > kMaxLogLineBytes) {
      out.emplace_back(bad("message longer than " + std::to_string(kMaxLogLineBytes) + " bytes"));
      return out;
    }
    out.push_back(from_message(message));
    return out;
  }

  if (is_banner(line)) {
    push_pending();
    out.emplace_back(SeatbeltLogEvent{});
    return out;
  }
  if (const auto h = parse_text_header(line)) {
    push_pending();
    if (h->kernel && starts_like_report(h->message)) {
      pending_ = true;
      pending_report_ = std::string(h->message);
      pending_bytes_ = pending_report_.size();
      return out;  // completes at the next header or at finish()
    }
    out.emplace_back(SeatbeltLogEvent{});  // someone else's line: kIgnored
    return out;
  }
  // No header: the next line of an open multi-line message, or stray text.
  if (!pending_) {
    out.emplace_back(SeatbeltLogEvent{});
    return out;
  }
  pending_bytes_ += line.size() + 1;
  if (pending_bytes_ > kMaxLogLineBytes || pending_more_.size() >= 64) {
    pending_ = false;
    pending_report_.clear();
    pending_more_.clear();
    pending_bytes_ = 0;
    out.emplace_back(bad("report spans too many lines"));
    return out;
  }
  pending_more_.emplace_back(line);
  return out;
}

std::vector<Result<SeatbeltLogEvent>> SeatbeltLogReader::finish() {
  std::vector<Result<SeatbeltLogEvent>> out;
  if (auto p = flush_pending()) out.push_back(std::move(*p));
  return out;
}

Result<std::vector<std::string>> log_stream_argv(std::string_view tag) {
  if (!valid_log_tag(tag)) return make_error(Errc::kInternal, "log_stream_argv: invalid tag");
  // The tag is [A-Za-z0-9_], so it cannot close the quoted string of the predicate.
  std::string predicate =
      "process == \"kernel\" AND sender == \"Sandbox\" AND eventMessage ENDSWITH \"";
  predicate += tag;
  predicate += "\"";
  return std::vector<std::string>{"/usr/bin/log", "stream",  "--style",     "ndjson",
                                  "--level",      "default", "--predicate", predicate};
}

}  // namespace vigil
