// `vigil replay LOG`: a session log turned back into a timeline, the exact annotation,
// the files written, the network decisions, a chain check, filtered JSON, or an HTML
// report. The views are pure functions of a loaded log (tested as such); the command in
// replay_command.cc only reads the file and prints.
//
// Everything printed from a log goes through one escaping function per output format
// (events::escape_for_terminal, events::escape_for_html): a log is attacker-influenced
// (paths, argv, hosts, output chunks all come from the sandboxed command).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "supervisor/core/events/event_schema.h"
#include "supervisor/replay/replay_changes.h"
#include "supervisor/replay/replay_feed.h"
#include "supervisor/log/session_log.h"

namespace vigil::proxy {
class DomainMatcher;
}

namespace vigil {

// What `vigil replay` was asked (its options: supervisor/cli/replay_options.cc).
struct ReplayArgs {
  std::string log;
  bool annotate = false;
  bool writes = false;
  bool net = false;
  bool verify = false;
  std::string json;
  std::string html;
  std::optional<std::uint64_t> command;  // --command N
  bool changes = false;
  bool diff = false;
  std::vector<std::string> paths;  // --changes/--diff: only these
  std::string policy;              // --policy NEW.json
};
// Runs one view over the log: the process's exit code.
int run_replay(const ReplayArgs& a);

namespace replay {

// The views. Each reads its records from a Feed (supervisor/replay/replay_feed.h) and writes
// through an Out as it goes, holding only bounded aggregates: a view with totals at its
// top (the timeline's command list, the HTML report's summary) reads the log twice or
// keeps capped counts and groups. The LoadedLog forms return the whole text (tests).
Result<void> stream_timeline(const Feed& feed, const Out& out);
Result<void> stream_writes(const Feed& feed, const Out& out);
Result<void> stream_net(const Feed& feed, const Out& out);
std::string render_timeline(const LoadedLog& log);
std::string render_writes(const LoadedLog& log);
std::string render_net(const LoadedLog& log);
std::string render_verify(const VerifyReport& r);
// Exact record lines whose kind is `filter` (a kind, "PREFIX.*", or "all").
std::string render_json(const LoadedLog& log, std::string_view filter);
// Error (naming the kinds there are) when `filter` matches no kind a log can hold.
Result<void> check_kind_filter(std::string_view filter);

struct AnnotationCheck {
  bool recorded = false;   // the log has an annotation record
  std::string text;        // its text (the bytes the model received)
  std::string recomputed;  // the block rebuilt from the log's events
  bool match = false;
  std::size_t first_difference = 0;  // byte offset, when they differ
};
Result<AnnotationCheck> check_annotation(const Feed& feed);
AnnotationCheck check_annotation(const LoadedLog& log);

// One self-contained HTML page: inline CSS, no script, no external resource (a CSP meta
// tag forbids any), every log-derived string through escape_for_html. One pass over the
// feed; each table lists its first kHtmlListedRows rows, then the rest grouped (by
// directory and cause, host, or event) with counts in a <details>, and says how many rows
// are not listed one by one and which view lists them all.
// `store`: the content store of a session id, for the Changes section's diffs (none:
// the diffs say the content is not at hand).
Result<void> stream_html(const Feed& feed, const VerifyReport& verify, std::string_view log_name,
                         const Out& out,
                         const std::function<ContentFn(const std::string&)>& store = {});
std::string render_html(const LoadedLog& log, const VerifyReport& verify,
                        std::string_view log_name);
inline constexpr std::size_t kHtmlListedRows = 2000;  // per table, one row each
inline constexpr std::size_t kHtmlMaxGroups = 500;    // per table, past the listed rows

// `--policy NEW.json` (supervisor/replay/replay_policy.cc): every fs.write and net.decision
// judged under another policy (supervisor/report/policy_judge.h); each verdict that would change
// is printed with the rule that decided it on each side, then the counts. One pass; the
// pointers must outlive the call.
struct PolicyUnderTest {
  std::string name;  // the settings file, as given
  const Policy* policy = nullptr;
  const Plan* plan = nullptr;
  const proxy::DomainMatcher* matcher = nullptr;
  std::string session_base;  // session_base_dir(): a session temp dir in older logs
};
Result<void> stream_policy_diff(const Feed& feed, const PolicyUnderTest& next, const Out& out);

// A session of many commands (supervisor/replay/replay_commands.cc): whether command N is in the
// log, and the list of commands with their violations that heads the timeline and the
// HTML report (the first kMaxListedCommands; the rest are counted).
Result<bool> has_command(const Feed& feed, std::uint64_t id);
// The records of command N of `log` (`--command N`): an agent session's command N (and
// its session.start), or a whole `vigil run` log as command 1; else an error naming why.
Result<Feed> command_feed(Feed feed, std::uint64_t id, const std::string& log);
bool has_command(const LoadedLog& log, std::uint64_t id);
inline constexpr std::size_t kMaxListedCommands = 100;

// The colour of the denial highlight (the banner over the denied list, and each denied
// row's marker); the screenshot test looks for it.
inline constexpr std::string_view kDenyColour = "#b3261e";

}  // namespace replay
}  // namespace vigil
