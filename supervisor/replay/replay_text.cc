// `vigil replay`'s terminal views (timeline, --writes, --net, --verify, --json) and the
// annotation check, each one pass over a Feed (the timeline two: its command list comes
// first), printing as it reads.
#include <algorithm>
#include <string>
#include <variant>
#include <vector>

#include "supervisor/report/annotation.h"
#include "supervisor/report/policy_judge.h"
#include "supervisor/replay/replay_command.h"
#include "supervisor/replay/replay_rows.h"

namespace vigil::replay {
namespace {

using events::escape_for_terminal;

std::string collect(const std::function<Result<void>(const Out&)>& view) {
  std::string s;
  (void)view(append_to(&s));  // a LoadedLog's feed cannot fail
  return s;
}

// Output rows held back for the exec records that may follow them (stream_timeline).
constexpr std::size_t kMaxHeldOutputRows = 256;

}  // namespace

Result<void> stream_timeline(const Feed& feed, const Out& out) {
  // First pass: the command list (bounded: CommandList), which heads the rows.
  CommandList commands;
  VIGIL_TRY_VOID(feed([&](const LogRecord& r) {
    commands.take(r.event);
    return true;
  }));
  out(commands.text() + pad("TIME", 12) + pad("PID", 8) + pad("COMMAND", 17) + pad("EVENT", 21) +
      pad("VERDICT", 10) + "DETAIL\n");
  RowMaker rows;
  // Causal order (issue 38.7): vigil-init records an exec once it has happened (its
  // /proc/PID/exe), which can reach the log after the first output the new program
  // wrote. So output rows wait for the record after them: an exec is listed before the
  // output it may have written; any other record, the end, or a full buffer lets them go.
  std::vector<std::string> held;
  const auto flush = [&] {
    for (const auto& l : held) out(l);
    held.clear();
  };
  VIGIL_TRY_VOID(feed([&](const LogRecord& rec) {
    const Row r = rows.row(rec.event);
    std::string line = pad(seconds(r.t), 12) + pad(escape_for_terminal(r.pid), 8) +
                       pad(escape_for_terminal(r.command.substr(0, 16)), 17) + pad(r.event, 21) +
                       pad(r.verdict == "denied" ? std::string("DENIED") : r.verdict, 10) +
                       escape_for_terminal(r.detail);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    line += "\n";
    const events::Kind k = rec.event.kind();
    if (k == events::Kind::kIoStdout || k == events::Kind::kIoStderr) {
      held.push_back(std::move(line));
      if (held.size() >= kMaxHeldOutputRows) flush();
      return true;
    }
    if (k != events::Kind::kProcExec) flush();
    out(line);
    return true;
  }));
  flush();
  return {};
}

Result<void> stream_writes(const Feed& feed, const Out& out) {
  out(pad("TIME", 12) + pad("PID", 8) + pad("VERDICT", 10) + pad("ACTION", 10) +
      "PATH  [SYSCALL FLAGS]  REASON\n");
  std::size_t n = 0;
  std::size_t denied = 0;
  std::size_t unguarded = 0;
  std::size_t quarantined = 0;
  VIGIL_TRY_VOID(feed([&](const LogRecord& r) {
    // What the post-run backstop moved out of the workspace: a write that got through and
    // was caught after the command, listed with the writes.
    if (const auto* q = std::get_if<events::FsQuarantine>(&r.event.body)) {
      ++quarantined;
      out(pad(seconds(r.event.t), 12) + pad("-", 8) + pad(kQuarantinedWord, 10) + pad("moved", 10) +
          escape_for_terminal(q->path) + "  [" + escape_for_terminal(q->rule) + "]  " +
          escape_for_terminal(q->reason) +
          (q->moved_to.empty() ? "" : "  -> " + escape_for_terminal(q->moved_to)) + "\n");
      return true;
    }
    const auto* w = std::get_if<events::FsWrite>(&r.event.body);
    if (w == nullptr) return true;
    ++n;
    const std::string flags = describe_flags(w->syscall, w->flags);
    std::string verdict = fs_verdict_word(*w);
    if (verdict == "denied") {
      verdict = "DENIED";
      ++denied;
    }
    if (verdict == kUnguardedWord) ++unguarded;
    out(pad(seconds(r.event.t), 12) + pad(std::to_string(w->pid), 8) + pad(verdict, 10) +
        pad(write_word(*w), 10) + escape_for_terminal(fs_target(*w)) + "  [" + w->syscall +
        (flags.empty() ? "" : " " + flags) + "]" +
        (w->reason.empty() ? "" : "  " + escape_for_terminal(w->reason)) +
        escape_for_terminal(not_stopped_note(*w)) + "  rule: " +
        escape_for_terminal(shown_rule_id(*w)) + "\n");
    return true;
  }));
  if (n == 0 && quarantined == 0) {
    out("(no write attempts recorded)\n");
  } else {
    out(std::to_string(n) + " write attempt(s): " + std::to_string(denied) + " denied, " +
        std::to_string(unguarded) + " " + kUnguardedWord + " (not stopped), " +
        std::to_string(quarantined) + " " + kQuarantinedWord + " (moved out after the command)\n");
  }
  return {};
}

Result<void> stream_net(const Feed& feed, const Out& out) {
  out(pad("TIME", 12) + pad("VERDICT", 10) + pad("PROTO", 9) + "TARGET  RULE  REASON\n");
  std::size_t n = 0;
  VIGIL_TRY_VOID(feed([&](const LogRecord& r) {
    if (const auto* d = std::get_if<events::NetDecision>(&r.event.body)) {
      ++n;
      out(pad(seconds(r.event.t), 12) +
          pad(d->verdict == events::NetVerdict::kDenied ? "DENIED" : "allowed", 10) +
          pad(events::to_string(d->proto), 9) + escape_for_terminal(net_target(d->host, d->port)) +
          "  " + escape_for_terminal(shown_rule_id(*d)) +
          (d->reason.empty() ? "" : "  " + escape_for_terminal(d->reason)) + "\n");
    } else if (const auto* f = std::get_if<events::NetUpstreamFailure>(&r.event.body)) {
      ++n;
      out(pad(seconds(r.event.t), 12) + pad("failed", 10) + pad(events::to_string(f->proto), 9) +
          escape_for_terminal(net_target(f->host, f->port)) + "  -  " +
          escape_for_terminal(f->what) + "\n");
    } else if (const auto* q = std::get_if<events::NetRequest>(&r.event.body)) {
      // A request inside a terminated tunnel: method, host, redacted path, status,
      // bytes, whether a secret was injected (never the secret).
      ++n;
      out(pad(seconds(r.event.t), 12) +
          pad(q->verdict == events::NetVerdict::kDenied ? "DENIED" : "allowed", 10) +
          pad("request", 9) + escape_for_terminal(q->method + " " + net_target(q->host, q->port) +
                                                  q->path) +
          " -> " + std::to_string(q->status) + "  " + std::to_string(q->bytes_up) + "B up " +
          std::to_string(q->bytes_down) + "B down" +
          (q->secret_injected ? "  secret injected" : "") +
          (q->rule.empty() ? "" : "  " + escape_for_terminal(q->rule)) +
          (q->reason.empty() ? "" : "  " + escape_for_terminal(q->reason)) + "\n");
    }
    return true;
  }));
  if (n == 0) out("(no network decisions recorded)\n");
  return {};
}

std::string render_timeline(const LoadedLog& log) {
  return collect([&](const Out& o) { return stream_timeline(feed_of(log), o); });
}
std::string render_writes(const LoadedLog& log) {
  return collect([&](const Out& o) { return stream_writes(feed_of(log), o); });
}
std::string render_net(const LoadedLog& log) {
  return collect([&](const Out& o) { return stream_net(feed_of(log), o); });
}

std::string render_verify(const VerifyReport& r) {
  if (!r.ok) {
    return "BROKEN at record " + std::to_string(r.broken_at.value_or(0)) + ": " +
           escape_for_terminal(r.why) + "\n";
  }
  if (!r.complete) return "INCOMPLETE: " + escape_for_terminal(r.why) + "\nhead " + r.head + "\n";
  std::string out = "ok: " + std::to_string(r.records) + " records, chain intact, session ended\n";
  if (r.key_id.empty()) {
    out +=
        "UNKEYED: this log names no key (written before vigil sealed its logs, or not by "
        "vigil): the chain shows it is one unbroken sequence, but nothing proves it is not a "
        "replacement\n";
  } else if (!r.sealed) {
    out += "UNCHECKED: " + escape_for_terminal(r.why) + "\n";
  } else {
    out += "sealed: the seal matches this user's key " + r.key_id + "\n";
  }
  return out + "head " + r.head + "\n";
}

Result<void> check_kind_filter(std::string_view filter) {
  const bool prefix = filter.size() > 2 && filter.substr(filter.size() - 2) == ".*";
  const std::string_view stem = prefix ? filter.substr(0, filter.size() - 1) : filter;
  std::string kinds;
  for (int k = 0; k < static_cast<int>(std::variant_size_v<events::Body>); ++k) {
    const std::string_view name = events::to_string(static_cast<events::Kind>(k));
    if (filter == "all" || (prefix ? name.substr(0, stem.size()) == stem : name == filter))
      return {};
    kinds += (kinds.empty() ? "" : ", ") + std::string(name);
  }
  return make_error(Errc::kInvalidPolicy, "replay --json: no record kind matches " +
                                              std::string(filter) + "; give one of " + kinds +
                                              ", a prefix such as net.*, or all");
}

std::string render_json(const LoadedLog& log, std::string_view filter) {
  std::string out;
  const bool all = filter == "all";
  const bool prefix = filter.size() > 2 && filter.substr(filter.size() - 2) == ".*";
  const std::string_view stem =
      prefix ? filter.substr(0, filter.size() - 1) : filter;  // keeps the dot
  for (const auto& r : log.records) {
    const std::string_view kind = events::to_string(r.event.kind());
    const bool take = all || (prefix ? kind.substr(0, stem.size()) == stem : kind == filter);
    // The line parsed as canonical: pure ASCII, no control bytes, safe to print as is.
    if (take) out += r.line + "\n";
  }
  return out;
}

Result<AnnotationCheck> check_annotation(const Feed& feed) {
  AnnotationCheck c;
  ViolationCollector violations;  // bounded (annotation.h): what the live session kept
  AnnotationOptions opts;
  VIGIL_TRY_VOID(feed([&](const LogRecord& r) {
    if (const auto* s = std::get_if<events::SessionStart>(&r.event.body)) opts.log_path = s->log;
    if (const auto* a = std::get_if<events::Annotation>(&r.event.body)) {
      c.recorded = true;
      c.text = a->text;
    }
    violations.add(r.event);
    return true;
  }));
  c.recomputed = render_annotation(violations, opts);
  c.match = c.recomputed == c.text;
  if (!c.match) {
    const auto diff =
        std::mismatch(c.text.begin(), c.text.end(), c.recomputed.begin(), c.recomputed.end());
    c.first_difference = static_cast<std::size_t>(diff.first - c.text.begin());
  }
  return c;
}

AnnotationCheck check_annotation(const LoadedLog& log) {
  auto c = check_annotation(feed_of(log));
  return c ? std::move(c).value() : AnnotationCheck{};
}

}  // namespace vigil::replay
