// macOS `log stream` output -> this session's Seatbelt violations.
//
// The kernel reports a denial as one log event whose message is
//     [N duplicate report[s] for ]Sandbox: PROCESS(PID) deny(N) OPERATION[ TARGET]
// followed, on a line of its own, by the message of the rule that denied it. Every deny
// rule vigil writes carries the session's tag as that message (profile_builder.h), so
// the tag -- the message's LAST line -- says which session a report belongs to.
//
// Everything here is untrusted input: the target is a path the sandboxed command chose
// (it may contain newlines, "deny(1)", or another session's tag), and any process can
// write log lines of its own. So:
//   * ndjson (`log stream --style ndjson`, what log_stream_argv() asks for) is the
//     trusted format: one event per line, the writer named by the log system itself
//     (processImagePath "/kernel", sender the Sandbox kext); anything else is dropped;
//   * the text styles (compact, default, syslog) are accepted for recorded logs, with
//     the writer checked from the line's header. A message there spans several lines,
//     and a path with a newline can imitate a header: text input can attribute a
//     forged report to the session whose tag it ends with. Use ndjson for live sessions.
// Malformed input gives an Error value, never a crash or an exception (fuzzed:
// tests/fuzz/fuzz_seatbelt_log.cc). Not thread-safe: one reader per stream.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "supervisor/core/base/result.h"

namespace vigil {

struct SeatbeltViolation {
  std::int64_t pid = 0;
  std::string process;    // as the kernel names it (may contain spaces and parentheses)
  std::string operation;  // "file-write-create", "network-outbound", "mach-lookup", ...
  std::string target;     // as reported, possibly empty ("signal" has none)
  enum class Target { kNone, kPath, kHostPort, kName } kind = Target::kNone;
  std::string host;         // kHostPort: "93.184.216.34", "::1", "*"
  std::uint16_t port = 0;   // kHostPort
  std::uint32_t count = 1;  // "3 duplicate reports for ..." folds 3 more reports into one line
};

// Parses the report grammar above (no tag line). Errors name what is wrong.
Result<SeatbeltViolation> parse_sandbox_report(std::string_view report);

struct SeatbeltLogEvent {
  enum class Kind {
    kViolation,     // a report tagged with this session's tag
    kOtherSession,  // a sandbox report, but not ours (another tag, or none)
    kIgnored,       // not a sandbox report: banners, headers, other processes' messages
    kLoss,          // the log system dropped messages: some violations may be missing
  };
  Kind kind = Kind::kIgnored;
  SeatbeltViolation violation;  // kViolation only
};

// Longest line accepted (a report is under 2 KiB: a 1 KiB path plus the header).
inline constexpr std::size_t kMaxLogLineBytes = 16 * 1024;

class SeatbeltLogReader {
 public:
  explicit SeatbeltLogReader(std::string tag);

  // One line of output, without its '\n'. Returns the events this line completes: an
  // ndjson line completes itself; a text-style report completes when the next header
  // line (or finish()) shows that its message has ended.
  std::vector<Result<SeatbeltLogEvent>> feed(std::string_view line);
  // End of stream: completes a pending text-style report.
  std::vector<Result<SeatbeltLogEvent>> finish();

 private:
  Result<SeatbeltLogEvent> from_message(std::string_view message) const;
  std::optional<Result<SeatbeltLogEvent>> flush_pending();

  std::string tag_;
  bool pending_ = false;                   // a text-style kernel report whose message is still open
  std::string pending_report_;             // its first line
  std::vector<std::string> pending_more_;  // the lines after it (path continuation, tag)
  std::size_t pending_bytes_ = 0;
};

// `log stream` asking only for this session's kernel sandbox reports, as ndjson.
// `tag` must satisfy valid_log_tag() (it is placed inside the predicate text).
Result<std::vector<std::string>> log_stream_argv(std::string_view tag);

}  // namespace vigil
