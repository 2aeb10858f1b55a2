// A log record as a row of raw strings (supervisor/replay/replay_rows.h), and the words and flag
// names the views share.
#include "supervisor/replay/replay_rows.h"

#include <fcntl.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <variant>

#include "supervisor/core/events/syscall_table.h"
#include "supervisor/report/policy_judge.h"

namespace vigil::replay {
namespace {

using events::Event;

template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <class... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

std::string basename_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Raw (escaped later with the rest of the row).
std::string preview(const std::string& data, std::size_t max = 60) {
  return data.size() > max ? data.substr(0, max) + "..." : data;
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

}  // namespace

// A shell-ish rendering of argv for reading (not for pasting into a shell): each
// argument quoted when it holds a space or a quote or is empty. Raw bytes: every view
// escapes the whole detail once when it prints it (escaping here too showed a newline
// as \\x0a).
std::string join_argv(const std::vector<std::string>& argv, std::size_t max_bytes) {
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

std::string seconds(std::uint64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%" PRIu64 ".%06" PRIu64, ns / 1000000000U,
                (ns / 1000U) % 1000000U);
  return buf;
}

std::string pad(std::string s, std::size_t width) {
  // A value as wide as its column ("QUARANTINED") still has a space after it.
  s.append(s.size() < width ? width - s.size() : 1, ' ');
  return s;
}

std::string net_target(const std::string& host, std::uint16_t port) {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::string parent_dir(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

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

namespace {

// A write's detail: the word, the target, the spelling the command used when it is not
// the resolved path (what a person needs to connect the record to the command's own
// source), the call and its flags, the reason and the deciding rule.
std::string write_detail(const events::FsWrite& b) {
  const std::string flags = describe_flags(b.syscall, b.flags);
  const bool respelled = !b.resolved.empty() && b.path != b.resolved;
  return write_word(b) + " " + fs_target(b) + (respelled ? " (as passed: " + b.path + ")" : "") +
         "  [" + b.syscall + (flags.empty() ? "" : " " + flags) + "]" +
         (b.reason.empty() ? "" : "  " + b.reason) + not_stopped_note(b) + "  rule: " +
         shown_rule_id(b);
}

std::string image_detail(const events::FsImage& b) {
  std::string d = b.path + " " + b.type;
  if (b.type == "file") d += ", " + std::to_string(b.size) + " bytes";
  if (!b.sha256.empty()) d += ", sha256 " + b.sha256.substr(0, 12);
  if (b.type == "symlink") d += " -> " + b.target;
  if (!b.note.empty()) d += " (" + b.note + ")";
  if (b.best_effort) d += " [best-effort]";
  return d;
}

std::string truncated_detail(const events::LogTruncated& b) {
  if (b.stdout_sha256.empty()) {  // a log before issue 38.4: the head only
    return "output past the first " + std::to_string(b.max_output_bytes) +
           " bytes is not in this log (vigil.log.maxOutputBytes)";
  }
  return std::to_string(b.omitted_bytes) +
         " bytes of output cut from this log here (it keeps the head and the tail, "
         "vigil.log.maxOutputBytes " +
         std::to_string(b.max_output_bytes) + "; the command's own output was whole): stdout " +
         std::to_string(b.stdout_bytes) + " bytes, sha256 " + b.stdout_sha256 + "; stderr " +
         std::to_string(b.stderr_bytes) + " bytes, sha256 " + b.stderr_sha256;
}

// "CONNECT example.org:443": a network record's protocol and target.
template <class Proto>
std::string proto_target(Proto proto, const std::string& host, std::uint16_t port) {
  return std::string(events::to_string(proto)) + " " + net_target(host, port);
}

std::string answer_detail(const events::NetAskAnswer& b) {
  return "ask " + std::to_string(b.ask) + (b.entry.empty() ? "" : ": " + b.entry) +
         (b.written.empty() ? "" : ", written to " + b.written) +
         (b.error.empty() ? "" : " (" + b.error + ")");
}

// "GET api.example.com:443/v1/x?k=[redacted] -> 200 (12 B up, 340 B down, secret injected)"
std::string request_detail(const events::NetRequest& b) {
  std::string out = b.method + " " + b.host + ":" + std::to_string(b.port) + b.path + " -> " +
                    std::to_string(b.status) + " (" + std::to_string(b.bytes_up) + " B up, " +
                    std::to_string(b.bytes_down) + " B down" +
                    (b.secret_injected ? ", secret injected" : "") + ")";
  if (!b.rule.empty()) out += "  [" + b.rule + "]";
  if (!b.reason.empty()) out += "  " + b.reason;
  return out;
}

void request_row(const events::NetRequest& b, Row& row) {
  row.verdict = events::to_string(b.verdict);
  row.detail = request_detail(b);
}

std::string unix_detail(const events::NetUnix& b) {
  return b.syscall + " AF_UNIX " + (b.type.empty() ? "" : b.type + " ") +
         (b.resolved.empty() ? b.path : b.resolved) + "  [" + b.result + "]" +
         (b.reason.empty() ? "" : "  " + b.reason);
}

void cancel_row(Row& row, const events::CommandCancel& b) {
  row.verdict = "cancelled";
  row.detail = "by the " + b.by + " (" + b.via + ")" + (b.reason.empty() ? "" : ": " + b.reason);
}

}  // namespace

Row RowMaker::row(const Event& e) {
  Row row;
  row.seq = e.seq;
  row.t = e.t;
  row.pid = "-";
  row.command = "-";
  row.event = events::to_string(e.kind());
  auto for_pid = [&](std::int64_t pid) {
    row.pid = std::to_string(pid);
    auto it = comm_.find({e.cmd.value_or(0), pid});
    if (it != comm_.end()) row.command = it->second;
  };
  auto& comm = comm_;
  std::visit(
      Overloaded{
          [&](const events::SessionStart& b) {
            row.detail = join_argv(b.argv) + "  (cwd " + b.cwd + ", backend " + b.backend + ")";
          },
          [&](const events::ProcExec& b) {
            if (comm.size() >= kMaxNamedProcesses) comm.clear();
            comm[{e.cmd.value_or(0), b.pid}] =
                b.argv.empty() ? std::string("?") : basename_of(b.argv[0]);
            for_pid(b.pid);
            row.detail = join_argv(b.argv) + (b.truncated ? " [argv truncated]" : "");
          },
          [&](const events::FsWrite& b) {
            for_pid(b.pid);
            row.verdict = fs_verdict_word(b);
            row.detail = write_detail(b);
          },
          [&](const events::NetDecision& b) {
            row.verdict = events::to_string(b.verdict);
            row.detail = std::string(events::to_string(b.proto)) + " " +
                         net_target(b.host, b.port) + (b.reason.empty() ? "" : "  " + b.reason) +
                         "  rule: " + shown_rule_id(b);
          },
          [&](const events::NetUpstreamFailure& b) {
            row.detail = proto_target(b.proto, b.host, b.port) + "  " + b.what;
          },
          [&](const auto& io) {  // io.stdout and io.stderr: every other kind is named here
            row.detail = std::to_string(io.data.size()) + " bytes: " + preview(io.data);
          },
          [&](const events::ObserverStats& b) {
            row.detail = "events " + std::to_string(b.events) + ", dropped " +
                         std::to_string(b.dropped) + ", held " + std::to_string(b.held);
          },
          [&](const events::Annotation& b) {
            const auto lines = std::count(b.text.begin(), b.text.end(), '\n');
            row.detail = std::to_string(lines) + " lines appended to stderr";
          },
          [&](const events::SessionEnd& b) { row.detail = ending_detail(b); },
          [&](const events::CommandStart& b) {
            row.detail = join_argv(b.argv) + "  (cwd " + b.cwd + ")";
          },
          [&](const events::CommandEnd& b) { row.detail = ending_detail(b); },
          [&](const events::CommandCancel& b) { cancel_row(row, b); },
          [&](const events::PolicyUpdate& b) {
            row.detail = "allowed domains: add [" + join_argv(b.add) + "], remove [" +
                         join_argv(b.remove) + "]";
          },
          [&](const events::FsQuarantine& b) {
            row.verdict = kQuarantinedWord;
            row.detail = b.path + " (" + b.rule + ": " + b.reason + ")" +
                         (b.moved_to.empty() ? "" : " -> " + b.moved_to);
          },
          [&](const events::FsImage& b) {
            row.verdict = b.phase + "-image";
            row.detail = image_detail(b);
          },
          [&](const events::NetAsk& b) {
            row.verdict = "asked";
            row.detail = "ask " + std::to_string(b.ask) + ": " + proto_target(b.proto, b.host, b.port);
          },
          [&](const events::NetAskAnswer& b) {
            row.verdict = b.answer;
            row.detail = answer_detail(b);
          },
          [&](const events::LogTruncated& b) { row.detail = truncated_detail(b); },
          [&](const events::LimitReached& b) {
            row.verdict = "limit";
            row.detail = "limit: " + b.limit + " (" + b.detail + ")";
          },
          [&](const events::FsRead& b) {
            for_pid(b.pid);
            row.verdict = "denied";
            row.detail = "read " + b.resolved +
                         (b.path != b.resolved ? " (as passed: " + b.path + ")" : "") + "  [" +
                         b.syscall + "]  " + b.reason;
          },
          [&](const events::NetUnix& b) {
            for_pid(b.pid);
            row.verdict = events::to_string(b.verdict);
            row.detail = unix_detail(b);
          },
          [&](const events::NetRequest& b) { request_row(b, row); },
      },
      e.body);
  return row;
}

std::string write_action(const events::FsWrite& w) {
  return std::string(action_word(w.syscall, w.flags));
}

std::string write_word(const events::FsWrite& w) {
  return events::to_string(events::write_action(w.syscall, w.flags));
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

}  // namespace vigil::replay
