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
#include <string>
#include <string_view>

#include "supervisor/event_schema.h"
#include "supervisor/session_log.h"

namespace CLI {
class App;
}

namespace vigil {

// Registers `vigil replay` on `app`; the returned function runs it once parsed.
std::function<int()> add_replay_command(CLI::App& app);

namespace replay {

// "create", "write", "truncate", "delete", "rmdir", "mkdir", "mknod", "rename", "link",
// "symlink", "chmod", "chown", "touch", "xattr" -- what a write-intent call does.
std::string write_action(const events::FsWrite& w);
// Symbolic flags for the open family ("O_WRONLY|O_CREAT|O_TRUNC"), hex for the rest,
// "" for 0.
std::string describe_flags(std::string_view syscall, std::uint64_t flags);

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
AnnotationCheck check_annotation(const LoadedLog& log);

// One self-contained HTML page: inline CSS, no script, no external resource (a CSP meta
// tag forbids any), every log-derived string through escape_for_html.
std::string render_html(const LoadedLog& log, const VerifyReport& verify,
                        std::string_view log_name);

// The colour of the denial highlight (the banner over the denied list, and each denied
// row's marker); the screenshot test looks for it.
// A session of many commands (supervisor/replay_commands.cc): one command's records
// (with session.start), and the list of commands with their violations.
LoadedLog only_command(const LoadedLog& log, std::uint64_t id);
bool has_command(const LoadedLog& log, std::uint64_t id);
std::string render_commands(const LoadedLog& log);
std::string render_commands_html(const LoadedLog& log);

inline constexpr std::string_view kDenyColour = "#b3261e";
// The verdict word every view shows for a write that was allowed into a protected name no
// mount guarded (FsWrite::unguarded): not stopped.
inline constexpr const char* kUnguardedWord = "UNGUARDED";

}  // namespace replay
}  // namespace vigil
