// Retention of session logs (issue 19, item 5), two ways over one mechanism:
// - vigil.log.keep: after a session, the default log directory keeps only the newest N of
//   the logs vigil named ("<UTC start>-<hex>.jsonl", which sort by start time);
// - `vigil logs prune --older-than DURATION [--dir D] [--dry-run]`: removes the logs last
//   written more than DURATION ago (in --dir, a --log file may have any name).
// Only what vigil wrote goes: a regular file (never a symlink, never followed) owned by us,
// named *.jsonl, whose first line is a session.start record in a log's canonical form (an
// empty file only under a name vigil gives). Anything else in the directory stays, and the
// directory itself must be a real one that only we can write (else someone else could have
// put files there, or could swap them between our check and the unlink).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil {

// Whether `name` is a file name vigil gives a session log ("20250131T120501Z-3f9c2a1b7d4e.jsonl").
// Pure.
bool is_session_log_name(std::string_view name);

// Whether `name` could be a session log's: "*.jsonl", not hidden. Pure.
bool is_log_file_name(std::string_view name);

// "7d", "12h", "30m", "45s", "2w": a positive whole number and one unit. Seconds. Pure.
Result<std::uint64_t> parse_log_age(std::string_view text);

// Of `names` (a directory's entries), the session logs to remove so that `keep` remain:
// the oldest by name, never `current` (the session that just ended). Pure.
std::vector<std::string> logs_to_prune(std::vector<std::string> names, std::uint64_t keep,
                                       std::string_view current);

// A directory entry and when it was last written (seconds since the epoch).
struct LogEntry {
  std::string name;
  std::int64_t mtime = 0;
  std::uint64_t bytes = 0;
};

// Of `entries`, the *.jsonl files last written more than `age` seconds before `now`,
// oldest first. Pure.
std::vector<LogEntry> logs_older_than(std::vector<LogEntry> entries, std::int64_t now,
                                      std::uint64_t age);

// A log directory opened for pruning (see the top of this file).
class LogDir {
 public:
  // Refused (Errc::kRefused) when `path` is a symlink, not a directory, someone else's or
  // writable by others; kNotFound when it does not exist.
  static Result<LogDir> open(const std::string& path);
  const std::string& path() const { return path_; }
  // The regular *.jsonl files owned by us.
  Result<std::vector<LogEntry>> logs() const;
  // Whether `name` reads as a log vigil wrote: its first line is a session.start record
  // (an empty file under a name vigil gives is a log reserved but never written).
  bool written_by_vigil(const std::string& name) const;
  // The session id its session.start names (the id of its change capture store); none
  // when it is not a log vigil wrote (as above).
  std::optional<std::string> session_of(const std::string& name) const;
  Result<void> remove(const std::string& name) const;

 private:
  LogDir() = default;
  std::string path_;
  UniqueFd fd_;
};

// <state>/vigil/captures for the log directory <state>/vigil/sessions. Pure.
std::string capture_root_beside(const std::string& sessions_dir);

// vigil.log.keep: removes the oldest logs from `dir` so that `keep` remain, each with its
// change capture store (state_size.h). Returns how
// many went; failures are counted in `failed`.
std::size_t prune_logs(const std::string& dir, std::uint64_t keep, std::string_view current,
                       std::size_t* failed);

}  // namespace vigil
