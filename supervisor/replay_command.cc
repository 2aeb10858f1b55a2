#include "supervisor/replay_command.h"

#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <variant>
#include <vector>

#include "supervisor/annotation.h"
#include "supervisor/core/diagnostics.h"
#include "supervisor/core/exit_codes.h"
#include "supervisor/core/syscall_table.h"
#include "supervisor/core/unique_fd.h"
#include "supervisor/log_key.h"
#include "supervisor/log_stream.h"

namespace vigil {
namespace replay {
namespace {

using events::escape_for_html;
using events::escape_for_terminal;
using events::Event;
using events::Kind;

template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <class... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

std::string seconds(std::uint64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%" PRIu64 ".%06" PRIu64, ns / 1000000000U,
                (ns / 1000U) % 1000000U);
  return buf;
}

std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

// A shell-ish rendering of argv for reading (not for pasting into a shell): each
// argument quoted when it holds a space or a quote or is empty. Raw bytes: every view
// escapes the whole detail once when it prints it (escaping here too showed a newline
// as \\x0a).
std::string join_argv(const std::vector<std::string>& argv, std::size_t max_bytes = 300) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    const std::string& e = a;
    if (e.empty() || e.find_first_of(" '\"") != std::string::npos) {
      out += '\'';
      for (const char c : e) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
      out += '\'';
    } else {
      out += e;
    }
    if (out.size() > max_bytes) {
      out.resize(max_bytes);
      out += "...";
      break;
    }
  }
  return out;
}

std::string basename_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string net_target(const std::string& host, std::uint16_t port) {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

// Raw (escaped later with the rest of the row).
std::string preview(const std::string& data, std::size_t max = 60) {
  return data.size() > max ? data.substr(0, max) + "..." : data;
}

// Raw strings, to be escaped once by the caller for its output format.
struct Row {
  std::uint64_t seq = 0;
  std::uint64_t t = 0;
  std::string pid;      // "-" when none
  std::string command;  // of that pid, from its last proc.exec
  std::string event;
  std::string verdict;  // "allowed", "denied", "ephemeral", or ""
  std::string detail;
};

// An allowed write into a protected name no mount guarded was not stopped: every view
// says so in the verdict column, in capitals, like a denial.
std::string fs_verdict_word(const events::FsWrite& w) {
  if (w.verdict == Verdict::kAllowed && !w.unguarded.empty()) return kUnguardedWord;
  return w.verdict == Verdict::kDenied ? "denied" : to_string(w.verdict);
}

std::string not_stopped_note(const events::FsWrite& w) {
  return w.unguarded.empty() ? std::string() : "  NOT STOPPED: protected name " + w.unguarded;
}

std::string fs_target(const events::FsWrite& w) {
  const std::string& to = w.resolved.empty() ? w.path : w.resolved;
  const std::string& from = w.from_resolved.empty() ? w.from : w.from_resolved;
  const std::string action = write_action(w);
  if (!from.empty() && (action == "rename" || action == "link")) return from + " -> " + to;
  if (!from.empty() && action == "symlink") return to + " -> " + from;
  return to;
}

// session.end and command.end: how it ended, how long it took, its counters.
template <class Ending>
std::string ending_detail(const Ending& b) {
  std::string d = (b.exit_code ? "exit " + std::to_string(*b.exit_code)
                               : "signal " + std::to_string(b.signal.value_or(0))) +
                  " after " + seconds(b.duration_ns) + " s";
  for (const auto& [k, v] : b.counters) d += ", " + k + " " + std::to_string(v);
  return d;
}

std::vector<Row> rows_of(const LoadedLog& log) {
  std::vector<Row> rows;
  // Each command of a session has its own PID namespace: a pid names a process within
  // its command.
  std::map<std::pair<std::uint64_t, std::int64_t>, std::string> comm;
  for (const auto& r : log.records) {
    const Event& e = r.event;
    Row row;
    row.seq = e.seq;
    row.t = e.t;
    row.pid = "-";
    row.command = "-";
    row.event = events::to_string(e.kind());
    auto for_pid = [&](std::int64_t pid) {
      row.pid = std::to_string(pid);
      auto it = comm.find({e.cmd.value_or(0), pid});
      if (it != comm.end()) row.command = it->second;
    };
    std::visit(
        Overloaded{
            [&](const events::SessionStart& b) {
              row.detail = join_argv(b.argv) + "  (cwd " + b.cwd + ", backend " + b.backend + ")";
            },
            [&](const events::ProcExec& b) {
              comm[{e.cmd.value_or(0), b.pid}] = b.argv.empty() ? std::string("?") : basename_of(b.argv[0]);
              for_pid(b.pid);
              row.detail = join_argv(b.argv) + (b.truncated ? " [argv truncated]" : "");
            },
            [&](const events::FsWrite& b) {
              for_pid(b.pid);
              row.verdict = fs_verdict_word(b);
              const std::string flags = describe_flags(b.syscall, b.flags);
              // The spelling the command used, when it is not the resolved path: what a
              // person needs to connect the record to the command's own source.
              const bool respelled = !b.resolved.empty() && b.path != b.resolved;
              row.detail = write_action(b) + " " + fs_target(b) +
                           (respelled ? " (as passed: " + b.path + ")" : "") + "  [" + b.syscall +
                           (flags.empty() ? "" : " " + flags) + "]" +
                           (b.reason.empty() ? "" : "  " + b.reason) + not_stopped_note(b);
            },
            [&](const events::NetDecision& b) {
              row.verdict = events::to_string(b.verdict);
              row.detail = std::string(events::to_string(b.proto)) + " " +
                           net_target(b.host, b.port) + (b.rule.empty() ? "" : "  rule " + b.rule) +
                           (b.reason.empty() ? "" : "  " + b.reason);
            },
            [&](const events::NetUpstreamFailure& b) {
              row.detail = std::string(events::to_string(b.proto)) + " " +
                           net_target(b.host, b.port) + "  " + b.what;
            },
            [&](const events::IoStdout& b) {
              row.detail = std::to_string(b.data.size()) + " bytes: " + preview(b.data);
            },
            [&](const events::IoStderr& b) {
              row.detail = std::to_string(b.data.size()) + " bytes: " + preview(b.data);
            },
            [&](const events::ObserverStats& b) {
              row.detail = "events " + std::to_string(b.events) + ", dropped " +
                           std::to_string(b.dropped) + ", held " + std::to_string(b.held);
            },
            [&](const events::Annotation& b) {
              std::size_t lines = 0;
              for (const char c : b.text) lines += c == '\n' ? 1 : 0;
              row.detail = std::to_string(lines) + " lines appended to stderr";
            },
            [&](const events::SessionEnd& b) { row.detail = ending_detail(b); },
            [&](const events::CommandStart& b) {
              row.detail = join_argv(b.argv) + "  (cwd " + b.cwd + ")";
            },
            [&](const events::CommandEnd& b) { row.detail = ending_detail(b); },
            [&](const events::PolicyUpdate& b) {
              row.detail = "allowed domains: add [" + join_argv(b.add) + "], remove [" +
                           join_argv(b.remove) + "]";
            },
            [&](const events::FsQuarantine& b) {
              row.verdict = "quarantined";
              row.detail = b.path + " (" + b.rule + ": " + b.reason + ")" +
                           (b.moved_to.empty() ? "" : " -> " + b.moved_to);
            },
            [&](const events::FsImage& b) {
              row.verdict = b.phase + "-image";
              row.detail = b.path + " " + b.type;
              if (b.type == "file") row.detail += ", " + std::to_string(b.size) + " bytes";
              if (!b.sha256.empty()) row.detail += ", sha256 " + b.sha256.substr(0, 12);
              if (b.type == "symlink") row.detail += " -> " + b.target;
              if (!b.note.empty()) row.detail += " (" + b.note + ")";
              if (b.best_effort) row.detail += " [best-effort]";
            },
            [&](const events::NetAsk& b) {
              row.verdict = "asked";
              row.detail = "ask " + std::to_string(b.ask) + ": " + std::string(events::to_string(b.proto)) +
                           " " + net_target(b.host, b.port);
            },
            [&](const events::NetAskAnswer& b) {
              row.verdict = b.answer;
              row.detail = "ask " + std::to_string(b.ask) +
                           (b.entry.empty() ? "" : ": " + b.entry) +
                           (b.written.empty() ? "" : ", written to " + b.written) +
                           (b.error.empty() ? "" : " (" + b.error + ")");
            },
            [&](const events::LogTruncated& b) {
              row.detail = "output past the first " + std::to_string(b.max_output_bytes) +
                           " bytes is not in this log (vigil.log.maxOutputBytes)";
            },
            [&](const events::LimitReached& b) {
              row.verdict = "limit";
              row.detail = "limit: " + b.limit + " (" + b.detail + ")";
            },
            [&](const events::NetUnix& b) {
              for_pid(b.pid);
              row.verdict = events::to_string(b.verdict);
              row.detail = b.syscall + " AF_UNIX " + (b.type.empty() ? "" : b.type + " ") +
                           (b.resolved.empty() ? b.path : b.resolved) + "  [" + b.result + "]" +
                           (b.reason.empty() ? "" : "  " + b.reason);
            },
        },
        e.body);
    rows.push_back(std::move(row));
  }
  return rows;
}

// ---- HTML -----------------------------------------------------------------------------

// Multi-line text in a <pre>: each line escaped on its own (escape_for_html would turn
// the newline itself into a visible \x0a).
std::string html_pre_lines(const std::string& text) {
  std::string out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto nl = text.find('\n', start);
    const std::string_view line = std::string_view(text).substr(
        start, nl == std::string::npos ? std::string::npos : nl - start);
    out += escape_for_html(line);
    if (nl == std::string::npos) break;
    out += '\n';
    start = nl + 1;
  }
  return out;
}

std::string verdict_class(const std::string& v) {
  if (v == "denied") return "deny";
  if (v == "ephemeral") return "eph";
  if (v == "allowed") return "ok";
  if (v == kUnguardedWord) return "ung";
  return "";
}

constexpr std::size_t kHtmlMaxRows = 20000;         // per table: a report must still open
constexpr std::size_t kHtmlMaxOutputBytes = 65536;  // per stream

// One stream of the command's output for the report: its first kHtmlMaxOutputBytes, and
// where it was cut, said in the report (issue 19.5: a cut without a marker reads as the
// command having printed nothing more).
class HtmlOutput {
 public:
  void add(const std::string& data) {
    total_ += data.size();
    if (kept_.size() < kHtmlMaxOutputBytes)
      kept_.append(data, 0, std::min(data.size(), kHtmlMaxOutputBytes - kept_.size()));
  }
  std::string html(const char* stream, std::string_view log_name) const {
    if (total_ == 0) return std::string("<pre>(no ") + stream + " recorded)</pre>\n";
    std::string h = "<pre>" + html_pre_lines(kept_) + "</pre>\n";
    if (total_ > kept_.size()) {
      h += std::string("<p class=\"cut\">[") + stream +
           " cut here: " + std::to_string(total_ - kept_.size()) + " more bytes of the " +
           std::to_string(total_) + " logged are not shown; <code>vigil replay --json io." +
           stream + " " + escape_for_html(log_name) + "</code> prints them all]</p>\n";
    }
    return h;
  }

 private:
  std::string kept_;
  std::uint64_t total_ = 0;
};

}  // namespace

std::string write_action(const events::FsWrite& w) {
  return std::string(action_word(w.syscall, w.flags));
}

std::string describe_flags(std::string_view syscall, std::uint64_t flags) {
  if (flags == 0) return "";
  const WriteSyscall* row = find_write_syscall(syscall);
  if (row != nullptr && row->emulation == Emulation::kOpen) {
    std::string out;
    auto add = [&](const char* name) {
      if (!out.empty()) out += '|';
      out += name;
    };
    std::uint64_t rest = flags;
    switch (flags & O_ACCMODE) {
      case O_WRONLY:
        add("O_WRONLY");
        break;
      case O_RDWR:
        add("O_RDWR");
        break;
      case O_RDONLY:
        break;
      default:
        add("O_ACCMODE");
        break;
    }
    rest &= ~static_cast<std::uint64_t>(O_ACCMODE);
    static constexpr std::pair<std::uint64_t, const char*> kBits[] = {
        {O_CREAT, "O_CREAT"},
        {O_EXCL, "O_EXCL"},
        {O_NOCTTY, "O_NOCTTY"},
        {O_TRUNC, "O_TRUNC"},
        {O_APPEND, "O_APPEND"},
        {O_NONBLOCK, "O_NONBLOCK"},
        {O_DSYNC, "O_DSYNC"},
        {O_DIRECTORY, "O_DIRECTORY"},
        {O_NOFOLLOW, "O_NOFOLLOW"},
        {O_CLOEXEC, "O_CLOEXEC"},
        {O_PATH, "O_PATH"},
        {O_NOATIME, "O_NOATIME"},
        {O_DIRECT, "O_DIRECT"},
        // O_SYNC and O_TMPFILE are composites (O_DSYNC, O_DIRECTORY plus a bit of their
        // own): name the bit of their own.
        {O_SYNC & ~O_DSYNC, "O_SYNC"},
        {O_TMPFILE & ~O_DIRECTORY, "O_TMPFILE"},
    };
    for (const auto& [bit, name] : kBits) {
      if ((rest & bit) != 0) {
        add(name);
        rest &= ~bit;
      }
    }
    if (rest != 0) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "0x%" PRIx64, rest);
      add(buf);
    }
    return out.empty() ? "O_RDONLY" : out;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "flags=0x%" PRIx64, flags);
  return buf;
}

std::string render_timeline(const LoadedLog& log) {
  std::string out = render_commands(log) + pad("TIME", 12) + pad("PID", 8) + pad("COMMAND", 17) + pad("EVENT", 21) +
                    pad("VERDICT", 10) + "DETAIL\n";
  for (const Row& r : rows_of(log)) {
    std::string line = pad(seconds(r.t), 12) + pad(escape_for_terminal(r.pid), 8) +
                       pad(escape_for_terminal(r.command.substr(0, 16)), 17) + pad(r.event, 21) +
                       pad(r.verdict == "denied" ? std::string("DENIED") : r.verdict, 10) +
                       escape_for_terminal(r.detail);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string render_writes(const LoadedLog& log) {
  std::string out = pad("TIME", 12) + pad("PID", 8) + pad("VERDICT", 10) + pad("ACTION", 10) +
                    "PATH  [SYSCALL FLAGS]  REASON\n";
  std::size_t n = 0;
  std::size_t denied = 0;
  std::size_t unguarded = 0;
  for (const auto& r : log.records) {
    const auto* w = std::get_if<events::FsWrite>(&r.event.body);
    if (w == nullptr) continue;
    ++n;
    const std::string flags = describe_flags(w->syscall, w->flags);
    std::string verdict = fs_verdict_word(*w);
    if (verdict == "denied") {
      verdict = "DENIED";
      ++denied;
    }
    if (verdict == kUnguardedWord) ++unguarded;
    out += pad(seconds(r.event.t), 12) + pad(std::to_string(w->pid), 8) + pad(verdict, 10) +
           pad(write_action(*w), 10) + escape_for_terminal(fs_target(*w)) + "  [" + w->syscall +
           (flags.empty() ? "" : " " + flags) + "]" +
           (w->reason.empty() ? "" : "  " + escape_for_terminal(w->reason)) +
           escape_for_terminal(not_stopped_note(*w)) + "\n";
  }
  if (n == 0) {
    out += "(no write attempts recorded)\n";
  } else {
    out += std::to_string(n) + " write attempt(s): " + std::to_string(denied) + " denied, " +
           std::to_string(unguarded) + " " + kUnguardedWord + " (not stopped)\n";
  }
  return out;
}

std::string render_net(const LoadedLog& log) {
  std::string out =
      pad("TIME", 12) + pad("VERDICT", 10) + pad("PROTO", 9) + "TARGET  RULE  REASON\n";
  std::size_t n = 0;
  for (const auto& r : log.records) {
    if (const auto* d = std::get_if<events::NetDecision>(&r.event.body)) {
      ++n;
      out += pad(seconds(r.event.t), 12) +
             pad(d->verdict == events::NetVerdict::kDenied ? "DENIED" : "allowed", 10) +
             pad(events::to_string(d->proto), 9) +
             escape_for_terminal(net_target(d->host, d->port)) + "  " +
             (d->rule.empty() ? std::string("(default)") : escape_for_terminal(d->rule)) +
             (d->reason.empty() ? "" : "  " + escape_for_terminal(d->reason)) + "\n";
    } else if (const auto* f = std::get_if<events::NetUpstreamFailure>(&r.event.body)) {
      ++n;
      out += pad(seconds(r.event.t), 12) + pad("failed", 10) + pad(events::to_string(f->proto), 9) +
             escape_for_terminal(net_target(f->host, f->port)) + "  -  " +
             escape_for_terminal(f->what) + "\n";
    }
  }
  if (n == 0) out += "(no network decisions recorded)\n";
  return out;
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

AnnotationCheck check_annotation(const LoadedLog& log) {
  AnnotationCheck c;
  std::vector<Event> evs;
  evs.reserve(log.records.size());
  AnnotationOptions opts;
  for (const auto& r : log.records) {
    if (const auto* s = std::get_if<events::SessionStart>(&r.event.body)) opts.log_path = s->log;
    if (const auto* a = std::get_if<events::Annotation>(&r.event.body)) {
      c.recorded = true;
      c.text = a->text;
    }
    evs.push_back(r.event);
  }
  c.recomputed = annotation_from_events(evs, opts);
  c.match = c.recomputed == c.text;
  if (!c.match) {
    std::size_t i = 0;
    while (i < c.text.size() && i < c.recomputed.size() && c.text[i] == c.recomputed[i]) ++i;
    c.first_difference = i;
  }
  return c;
}

std::string render_html(const LoadedLog& log, const VerifyReport& verify,
                        std::string_view log_name) {
  const events::SessionStart* start = nullptr;
  const events::SessionEnd* end = nullptr;
  std::string session;
  HtmlOutput out_bytes, err_bytes;
  for (const auto& r : log.records) {
    if (session.empty()) session = r.event.session;
    if (const auto* s = std::get_if<events::SessionStart>(&r.event.body)) start = s;
    if (const auto* s = std::get_if<events::SessionEnd>(&r.event.body)) end = s;
    if (const auto* s = std::get_if<events::IoStdout>(&r.event.body)) out_bytes.add(s->data);
    if (const auto* s = std::get_if<events::IoStderr>(&r.event.body)) err_bytes.add(s->data);
  }
  const auto rows = rows_of(log);
  ViolationCollector violations;
  for (const auto& r : log.records) violations.add(r.event);
  const AnnotationCheck ann = check_annotation(log);
  const std::string deny(kDenyColour);

  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  // Belt and braces: nothing in this page is loaded from anywhere or run, even if an
  // escaping bug let markup through.
  h += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
       "'unsafe-inline'\">\n";
  h += "<title>vigil session " + escape_for_html(session) + "</title>\n<style>\n";
  h += "body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1d1d1f;background:#fafafa}\n"
       "header{padding:16px 24px;background:#24292f;color:#fff}\n"
       "header h1{margin:0 0 6px;font-size:20px}\n"
       "header code,header .cmd{font-family:ui-monospace,monospace}\n"
       "section{margin:16px 24px;background:#fff;border:1px solid "
       "#d0d7de;border-radius:6px;overflow:hidden}\n"
       "section h2{margin:0;padding:8px 12px;font-size:16px;background:#eef1f4;border-bottom:1px "
       "solid #d0d7de}\n"
       "section.denials h2{background:" +
       deny +
       ";color:#fff}\n"
       "table{border-collapse:collapse;width:100%;font-size:13px}\n"
       "td,th{padding:3px 8px;text-align:left;vertical-align:top;border-bottom:1px solid #eee}\n"
       "td.p{font-family:ui-monospace,monospace;overflow-wrap:anywhere}\n"
       "tr.deny td{background:#fdecea}\n"
       "tr.deny td.v{background:" +
       deny +
       ";color:#fff;font-weight:bold}\n"
       "tr.eph td.v{background:#f1c40f}\n"
       "tr.ung td{background:#fff1e0}\n"
       "tr.ung td.v{background:#bc4c00;color:#fff;font-weight:bold}\n"
       "section.unguarded h2{background:#bc4c00;color:#fff}\n"
       "tr.ok td.v{color:#1a7f37}\n"
       "pre{margin:0;padding:8px 12px;font:12px/1.35 "
       "ui-monospace,monospace;white-space:pre-wrap;overflow-wrap:anywhere}\n"
       ".chain{padding:6px 10px;margin-top:8px;border-radius:4px;display:inline-block}\n"
       ".chain.good{background:#1a7f37}.chain.bad{background:#9a6700}\n"
       ".none{padding:8px 12px;color:#57606a}\n"
       "</style></head><body>\n";

  // Header: what ran, how it ended, and whether the log can be trusted.
  h += "<header><h1>vigil session <code>" + escape_for_html(session) + "</code></h1>\n";
  h += "<div>log: <code>" + escape_for_html(log_name) + "</code></div>\n";
  if (start != nullptr) {
    std::string argv;
    for (const auto& a : start->argv) argv += (argv.empty() ? "" : " ") + escape_for_html(a);
    h += "<div>command: <span class=\"cmd\">" + argv + "</span></div>\n";
    h += "<div>cwd: <code>" + escape_for_html(start->cwd) +
         "</code> &middot; backend: " + escape_for_html(start->backend) + " &middot; vigil " +
         escape_for_html(start->versions.vigil) + "</div>\n";
  }
  if (end != nullptr) {
    h += "<div>ended: " +
         (end->exit_code ? "exit " + std::to_string(*end->exit_code)
                         : "signal " + std::to_string(end->signal.value_or(0))) +
         " after " + seconds(end->duration_ns) + " s</div>\n";
  }
  if (verify.ok && verify.complete) {
    h += "<div class=\"chain good\">hash chain intact, " + std::to_string(verify.records) +
         " records</div>\n";
  } else {
    h +=
        "<div class=\"chain bad\">" +
        (verify.ok ? "hash chain intact but incomplete: " + escape_for_html(verify.why)
                   : "hash chain BROKEN at record " + std::to_string(verify.broken_at.value_or(0)) +
                         ": " + escape_for_html(verify.why)) +
        "</div>\n";
  }
  if (!log.unreadable.empty()) {
    h += "<div class=\"chain bad\">" + std::to_string(log.unreadable.size()) +
         " unreadable line(s) skipped</div>\n";
  }
  if (!violations.unguarded().empty()) {
    h += "<div class=\"chain bad\">" + std::to_string(violations.unguarded().size()) +
         " protected name(s) written and NOT stopped</div>\n";
  }
  h += "</header>\n";

  // Writes that were not stopped before anything else: they are on the host now.
  if (!violations.unguarded().empty()) {
    h += "<section class=\"unguarded\" id=\"unguarded\"><h2>Not stopped: " +
         std::to_string(violations.unguarded().size()) +
         " protected name(s) written</h2>\n<table>\n<tr><th>verdict</th><th>operation</th>"
         "<th>target</th><th>writes</th><th>why it matters</th></tr>\n";
    for (const auto& v : violations.unguarded()) {
      h += "<tr class=\"ung\"><td class=\"v\">" + std::string(kUnguardedWord) + "</td><td>" +
           escape_for_html(plain_actions(v.actions)) + "</td><td class=\"p\">" +
           escape_for_html(v.target) + "</td><td>" + std::to_string(v.count) + "</td><td>" +
           escape_for_html(v.reason) + "</td></tr>\n";
    }
    h += "</table></section>\n";
  }

  // Denials first: what a person opening the report is looking for.
  if (!violations.denied().empty()) {
    h += "<section class=\"denials\" id=\"denials\"><h2>Denied: " +
         std::to_string(violations.denied().size()) + " target(s), " +
         std::to_string(violations.denied_attempts()) + " attempt(s)</h2>\n<table>\n";
    h += "<tr><th>verdict</th><th>operation</th><th>target</th><th>attempts</th><th>reason</th></"
         "tr>\n";
    std::size_t n = 0;
    for (const auto& v : violations.denied()) {
      if (++n > kHtmlMaxRows) {
        h += "<tr><td colspan=\"5\">... " + std::to_string(violations.denied().size() - kHtmlMaxRows) +
             " more target(s): see the log (vigil replay --writes)</td></tr>\n";
        break;
      }
      h += "<tr class=\"deny\"><td class=\"v\">denied</td><td>" + escape_for_html(v.op) +
           "</td><td class=\"p\">" + escape_for_html(v.target) + "</td><td>" +
           std::to_string(v.count) + "</td><td>" + escape_for_html(v.reason) + "</td></tr>\n";
    }
    h += "</table></section>\n";
  } else {
    h += "<section id=\"denials\"><h2>Denied</h2><div class=\"none\">nothing was "
         "denied</div></section>\n";
  }

  h += "<section id=\"annotation\"><h2>What the model was told (appended to stderr)</h2>\n";
  if (ann.recorded) {
    h += "<pre>" + html_pre_lines(ann.text) + "</pre>\n";
  } else {
    h += "<div class=\"none\">no annotation: nothing was appended to stderr</div>\n";
  }
  if (!ann.match) {
    h += "<div class=\"chain bad\">the recorded annotation differs from the one recomputed from "
         "the events "
         "(first difference at byte " +
         std::to_string(ann.first_difference) + ")</div>\n";
  }
  h += "</section>\n";

  auto section_rows = [&](const char* id, const char* title, auto&& keep) {
    std::string s = std::string("<section id=\"") + id + "\"><h2>" + title + "</h2>\n<table>\n";
    s += "<tr><th>time</th><th>pid</th><th>command</th><th>event</th><th>verdict</th><th>detail</"
         "th></tr>\n";
    std::size_t n = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      if (!keep(log.records[i].event)) continue;
      if (++n > kHtmlMaxRows) {
        s += "<tr><td colspan=\"6\">... more rows: see the log</td></tr>\n";
        break;
      }
      const std::string cls = verdict_class(r.verdict);
      s += "<tr" + (cls.empty() ? std::string() : " class=\"" + cls + "\"") + "><td>" +
           seconds(r.t) + "</td><td>" + escape_for_html(r.pid) + "</td><td>" +
           escape_for_html(r.command) + "</td><td>" + escape_for_html(r.event) +
           "</td><td class=\"v\">" + escape_for_html(r.verdict) + "</td><td class=\"p\">" +
           escape_for_html(r.detail) + "</td></tr>\n";
    }
    if (n == 0) s += "<tr><td colspan=\"6\" class=\"none\">none</td></tr>\n";
    s += "</table></section>\n";
    return s;
  };
  h += render_commands_html(log);
  h += section_rows("files", "Files touched",
                    [](const Event& e) { return e.kind() == Kind::kFsWrite; });
  h += section_rows("network", "Network decisions", [](const Event& e) {
    return e.kind() == Kind::kNetDecision || e.kind() == Kind::kNetUpstreamFailure;
  });
  h += section_rows("timeline", "Timeline", [](const Event& e) {
    return e.kind() != Kind::kIoStdout && e.kind() != Kind::kIoStderr;
  });

  h += "<section id=\"output\"><h2>Command output</h2>\n";
  h += out_bytes.html("stdout", log_name);
  h += err_bytes.html("stderr", log_name);
  h += "</section>\n</body></html>\n";
  return h;
}

}  // namespace replay

// ---- the command ------------------------------------------------------------------------

namespace {

struct ReplayArgs {
  std::string log;
  bool annotate = false;
  bool writes = false;
  bool net = false;
  bool verify = false;
  std::string json;
  std::string html;
  std::optional<std::uint64_t> command;  // --command N
};

int fail(const std::string& what) {
  print_error(what);
  return to_int(ExitCode::kUsage);
}

// display-safe: the views build their text with escape_for_terminal/escape_for_html
void print(const std::string& s) { std::fwrite(s.data(), 1, s.size(), stdout); }

Result<void> write_file(const std::string& path, const std::string& data) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return system_error("cannot write " + path);
  std::string_view rest(data);
  while (!rest.empty()) {
    const ssize_t n = ::write(fd.get(), rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return system_error("cannot write " + path);
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

int run_replay(const ReplayArgs& a) {
  const int modes = int{a.annotate} + int{a.writes} + int{a.net} + int{a.verify} +
                    int{!a.json.empty()} + int{!a.html.empty()};
  if (modes > 1)
    return fail(
        "replay: give at most one of --annotate, --writes, --net, --verify, --json, --html");

  // --verify and --json stream the log (constant memory, any size); the other views
  // hold it whole, up to kMaxLogFileBytes.
  // This user's key, to check a sealed log with (supervisor/log_key.h); never created here.
  std::optional<std::string> key;
  if (auto path = log_key_path(); path) {
    auto k = load_log_key(*path);
    if (k) {
      key = std::move(k).value();
    } else if (k.error().code != Errc::kNotFound) {
      std::fprintf(stderr, "vigil: warning: %s\n",
                   events::escape_for_terminal(k.error().message).c_str());
    }
  }
  const auto key_view = key ? std::optional<std::string_view>(*key) : std::nullopt;
  if (a.verify) {
    auto verify = verify_log(a.log, key_view);
    if (!verify) return fail(verify.error().message);
    print(replay::render_verify(*verify));
    // An unkeyed log (from before logs were sealed) passes on its chain, and says so; a
    // keyed one passes only with its seal checked.
    const bool seal_ok = verify->key_id.empty() || verify->sealed;
    return verify->ok && verify->complete && seal_ok ? 0 : 1;
  }
  auto opened = open_session_log(a.log);
  if (!opened) return fail(opened.error().message);
  if (!a.json.empty()) {
    if (auto known = replay::check_kind_filter(a.json); !known) return fail(known.error().message);
    auto streamed = for_each_record_line(opened->get(), a.json, [](const std::string& line) {
      // The line parsed as canonical: pure ASCII, no control bytes, safe to print as is.
      print(line + "\n");
    });
    if (!streamed) return fail(streamed.error().message);
    return 0;
  }
  auto text = read_log_file(a.log);
  if (!text) return fail(text.error().message);
  const VerifyReport verify = verify_log_text(*text, key_view);
  LoadedLog log = load_log_text(*text);
  if (a.command) {
    if (!replay::has_command(log, *a.command))
      return fail("replay: the log has no command " + std::to_string(*a.command));
    log = replay::only_command(log, *a.command);
  }
  // Every other view still shows what it can, but says first that the log is not whole.
  if (!verify.ok) {
    std::fprintf(
        stderr,
        "vigil: warning: this log does not verify (record %zu: %s); showing what can be read\n",
        verify.broken_at.value_or(0), events::escape_for_terminal(verify.why).c_str());
  }
  if (a.annotate) {
    const auto c = replay::check_annotation(log);
    if (c.match) {
      print(c.text);  // equal to the recomputed block, which is escaped by construction
      return 0;
    }
    // They differ: the recorded bytes are not vouched for, so each line is shown
    // escaped (the line breaks kept, so the block stays readable).
    std::string shown;
    std::size_t start = 0;
    while (start < c.text.size()) {
      const std::size_t nl = std::min(c.text.find('\n', start), c.text.size());
      shown += events::escape_for_terminal(std::string_view(c.text).substr(start, nl - start));
      if (nl < c.text.size()) shown += '\n';
      start = nl + 1;
    }
    print(shown);
    std::fprintf(stderr,
                 "vigil: the recorded annotation (%zu bytes%s) differs from the one recomputed "
                 "from the events "
                 "(%zu bytes) at byte %zu\n",
                 c.text.size(), c.recorded ? "" : ", no annotation record", c.recomputed.size(),
                 c.first_difference);
    return 1;
  }
  if (a.writes) {
    print(replay::render_writes(log));
  } else if (a.net) {
    print(replay::render_net(log));
  } else if (!a.html.empty()) {
    if (auto w = write_file(a.html, replay::render_html(log, verify, a.log)); !w)
      return fail(w.error().message);
    print_error("wrote " + a.html);
  } else {
    print(replay::render_timeline(log));
  }
  return 0;
}

}  // namespace

std::function<int()> add_replay_command(CLI::App& app) {
  auto args = std::make_shared<ReplayArgs>();
  auto* cmd = app.add_subcommand(
      "replay", "show a session log: timeline, annotation, writes, network, report");
  cmd->add_option("log", args->log, "the session log (.jsonl)")->required();
  cmd->add_flag(
      "--annotate", args->annotate,
      "print the <sandbox_violations> block the model received, and check it against the events");
  cmd->add_flag("--writes", args->writes,
                "every path created, written, renamed or deleted, with its verdict");
  cmd->add_flag("--net", args->net, "the network decisions");
  cmd->add_flag("--verify", args->verify,
                "check the hash chain; exit 1 and name the first broken record");
  cmd->add_option("--command", args->command,
                  "a session's command N only (its id: command.start's cmd)");
  cmd->add_option("--json", args->json,
                  "print the records of KIND (fs.write, net.*, all) as JSON lines");
  cmd->add_option("--html", args->html, "write a self-contained HTML report to OUT");
  return [args] { return run_replay(*args); };
}

}  // namespace vigil
