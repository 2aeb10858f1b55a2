// Pieces the replay views share (supervisor/replay/replay_text.cc, replay_html.cc,
// replay_commands.cc): a record turned into a row of raw strings, and the list of a
// session's commands. Raw: each view escapes once for its own output format.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "supervisor/report/annotation.h"
#include "supervisor/core/events/event_schema.h"

namespace vigil::replay {

std::string seconds(std::uint64_t ns);
// A shell-ish rendering of argv for reading (not for pasting into a shell), raw bytes,
// cut past `max_bytes`.
std::string join_argv(const std::vector<std::string>& argv, std::size_t max_bytes = 300);
// `s` and spaces up to `width`, or one space past a value that fills it.
std::string pad(std::string s, std::size_t width);
std::string net_target(const std::string& host, std::uint16_t port);
// The directory part of a path ("/a/b/c" -> "/a/b", "c" -> "."): the rows past a view's
// listed ones are grouped by it.
std::string parent_dir(const std::string& path);

// The verdict word every view shows for a write that was allowed into a protected name no
// mount guarded (FsWrite::unguarded): not stopped.
inline constexpr const char* kUnguardedWord = "UNGUARDED";
// ... and for what the post-run backstop moved out of the workspace (fs.quarantine).
inline constexpr const char* kQuarantinedWord = "QUARANTINED";

// The word every view shows for a write ("create", "write", "delete", "change mode"):
// to_string(events::write_action()), the same as the <sandbox_violations> block's.
std::string write_word(const events::FsWrite& w);
// What kind of change the call makes, for the change set's bookkeeping and the shape of
// a target ("mkdir", "symlink", "rmdir": action_word(), supervisor/core/events/
// syscall_table.h). Not shown as a write's word: write_word() is.
std::string write_action(const events::FsWrite& w);
// Symbolic flags for the open family ("O_WRONLY|O_CREAT|O_TRUNC"), hex for the rest,
// "" for 0.
std::string describe_flags(std::string_view syscall, std::uint64_t flags);

// An allowed write into a protected name no mount guarded was not stopped: every view
// says so in the verdict column, in capitals, like a denial.
std::string fs_verdict_word(const events::FsWrite& w);
std::string not_stopped_note(const events::FsWrite& w);
// "to" or "from -> to" (rename, link) or "link -> target" (symlink), resolved when known.
std::string fs_target(const events::FsWrite& w);

struct Row {
  std::uint64_t seq = 0;
  std::uint64_t t = 0;
  std::string pid;      // "-" when none
  std::string command;  // of that pid, from its last proc.exec
  std::string event;
  std::string verdict;  // "allowed", "denied", "ephemeral", "UNGUARDED", ... or ""
  std::string detail;
};

// Rows in file order. Remembers each process's name (its last proc.exec) for the rows
// after it, for at most kMaxNamedProcesses processes at a time: past that the names are
// forgotten and learnt again, so a log of any number of processes is read in bounded
// memory.
class RowMaker {
 public:
  static constexpr std::size_t kMaxNamedProcesses = 65536;
  Row row(const events::Event& e);

 private:
  // Each command of a session has its own PID namespace: a pid names a process within
  // its command.
  std::map<std::pair<std::uint64_t, std::int64_t>, std::string> comm_;
};

// The session's commands (records with a cmd), each with its <sandbox_violations> block
// recomputed from its own events, fed one record at a time. The first kMaxListedCommands
// commands are listed (each keeps one ViolationCollector, itself bounded); later ones are
// only counted.
class CommandList {
 public:
  CommandList();
  ~CommandList();
  CommandList(const CommandList&) = delete;
  CommandList& operator=(const CommandList&) = delete;
  void take(const events::Event& e);
  std::string text() const;  // for the timeline; "" when the log has no commands
  std::string html() const;  // for the report; "" when the log has no commands

 private:
  struct Entry;
  std::vector<std::string> blocks() const;
  AnnotationOptions opts_;
  std::map<std::uint64_t, std::unique_ptr<Entry>> listed_;
  std::uint64_t unlisted_ = 0;  // command.start records of commands past the list
};

}  // namespace vigil::replay
