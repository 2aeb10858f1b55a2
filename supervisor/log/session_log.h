// The session log: one JSON-lines file per `vigil run` (schema: docs/events.md).
//
// Writing: SessionLog assigns each record's envelope (seq, t, session, src, prev), where
// prev is the SHA-256 of the previous record's exact line, so an edited, deleted or
// reordered record breaks the chain. Every record is written whole to an O_APPEND file,
// one write(2) per record, or, while writes are held (hold_writes: the supervisor holds
// them while it passes on what one wake read from the sandbox's pipes), one write(2) per
// batch of whole lines: a crash of vigil loses at most the record or the batch being
// written (it is in the kernel's page cache once write returns; close() starts the
// write-back to disk). The lines, and so the chain, are the same either way.
//
// Reading: load_log() parses a log for `vigil replay`; verify_log() checks the chain and
// names the first broken record and why.
//
// What the chain proves: that the log is the one sequence the writer produced, up to its
// last record. Anyone who can write the file can also recompute every hash after an edit,
// and can drop trailing records; to detect that, keep the head hash (SessionLog::head(),
// printed by `vigil replay --verify`) somewhere the session cannot write.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "supervisor/core/policy/policy.h"
#include "supervisor/core/base/result.h"
#include "supervisor/log/log_key.h"     // vigil_state_dir(): where the logs and their key live
#include "supervisor/log/log_stream.h"  // verify_log(): the chain check
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/core/events/event_schema.h"

namespace vigil {

// "20250131T120501Z-3f9c2a1b7d4e": UTC start time (so `ls` sorts sessions) and 48
// random bits from getrandom(2). Matches the schema's session-id syntax.
std::string new_session_id();

// $XDG_STATE_HOME/vigil/sessions/<id>.jsonl, or ~/.local/state/... when XDG_STATE_HOME is
// unset, empty or relative (the XDG spec says to ignore a relative one). Pure: the two
// environment values are arguments. Error when HOME is unusable too.
Result<std::string> default_log_path(std::string_view session_id, const char* xdg_state_home,
                                     const char* home);
// <state>/vigil/captures/<id>: the change store of session `id` (not created), beside
// its log (default_log_path's rules). Pure.
Result<std::string> capture_dir_for(const std::string& id, const char* xdg_state_home,
                                    const char* home);
// Which store names belong to session `id`: `id` itself (`vigil run`) and `id-N`, the
// store of an agent session's command N (session, serve, mcp). Pure.
// Returns N + 1 for `id-N`, 0 for `id`, -1 for any other name (a spare's, another's).
long store_name_order(std::string_view name, std::string_view id);
// Every store of session `id` that exists, `id` first, then by command number: what
// `vigil replay --diff` and `vigil undo` read pre-images from.
Result<std::vector<std::string>> capture_dirs_for(const std::string& id, const char* xdg_state_home,
                                                  const char* home);

// Creates the directories above a default log path: missing components 0700; the
// final "vigil" and "sessions" directories must be real directories owned by us and not
// writable by group or others (else refused: someone else could swap our logs).
Result<void> prepare_log_dir(const std::string& log_path);

// The check prepare_log_dir makes of each of those directories, on its lstat (or an
// fstat of the directory opened O_NOFOLLOW), and `vigil logs prune` of the directory it
// prunes: a real directory owned by `me`, not writable by group or others. The error
// says what is wrong and ends "refusing to <refusing>". Pure.
Result<void> judge_log_dir(const std::string& dir, const struct stat& st, uid_t me,
                           std::string_view refusing);

// sha256 hex of the canonical JSON of the policy model (every field but `warnings`,
// keys sorted): the session.start policy_digest. Two runs under the same effective
// policy have the same digest.
std::string policy_digest(const Policy& policy);
std::string canonical_policy_json(const Policy& policy);

class SessionLog {
 public:
  // Nanoseconds since the session started. The default is steady_clock from create().
  using Clock = std::function<std::uint64_t()>;
  // Called after each record is written (or, while writes are held, kept to be written),
  // with the record and its line (no newline), under the log's lock, in seq order: the
  // embedder API's live event stream. Must not call back into the log.
  using Listener = std::function<void(const events::Event&, const std::string& line)>;

  // Creates `path` with O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600: never appends to, or
  // follows a symlink planted at, an existing file. The parent must exist (see
  // prepare_log_dir for the default location). `session_id` must match the schema's id
  // syntax ([A-Za-z0-9._-]{1,64}).
  static Result<SessionLog> create(const std::string& path, std::string session_id,
                                   Clock clock = {});
  // The same in two steps: reserve() creates the file exactly as create() does (so that
  // it exists, e.g. to be bound read-only into a sandbox, before anything is written);
  // create(reserved, ...) then takes it over.
  struct Reserved {
    UniqueFd fd;
    std::string path;
  };
  static Result<Reserved> reserve(const std::string& path);
  static Result<SessionLog> create(Reserved reserved, std::string session_id, Clock clock = {});

  SessionLog(SessionLog&&) noexcept;
  SessionLog& operator=(SessionLog&&) noexcept;
  ~SessionLog();

  // Validates the body against Limits::log() (so that every record written can be read
  // back), fills the envelope, writes the line. Returns the record's seq. Thread-safe:
  // appends are serialised, so the proxy's thread and the event hub may both call it.
  // After a failed write (disk full) the file may end in a partial line: every later
  // append fails too, rather than glue a record onto it.
  // `cmd`: the session's command the record belongs to (the envelope's cmd), if any.
  Result<std::uint64_t> append(events::Source src, events::Body body,
                               std::optional<std::uint64_t> cmd = std::nullopt);

  // Held writes: between hold_writes() and the matching release_writes(), records are
  // kept in memory (up to kHeldBytes, then written) and written together on release, in
  // one write(2) instead of one per record. Holds nest (and threads may hold at once);
  // the last release writes. A failed write fails the release, and every later append.
  void hold_writes();
  Result<void> release_writes();
  static constexpr std::size_t kHeldBytes = 256 * 1024;

  void set_listener(Listener l);
  // Seals the log: session.end gets its `mac` under `key` (supervisor/log/log_key.h). Set it
  // before session.start is written, which names the key (SessionStart::key_id).
  void set_key(std::string key);

  const std::string& path() const;
  const std::string& session() const;
  std::string head() const;       // sha256 of the last line written (kGenesisPrev if none)
  std::uint64_t records() const;  // records written
  std::uint64_t elapsed_ns() const;

  // Starts write-back to disk (without waiting) and closes. Appends after close fail. The
  // destructor closes without starting write-back.
  Result<void> close();

 private:
  struct State;
  explicit SessionLog(std::unique_ptr<State> s);
  std::unique_ptr<State> s_;
};

// ---- reading --------------------------------------------------------------------------

inline constexpr std::size_t kMaxLogFileBytes = std::size_t{1} << 30;

struct LogRecord {
  std::size_t index = 0;  // line number, 0-based
  std::string line;       // exactly as in the file, without its newline
  events::Event event;
};

struct UnreadableLine {
  std::size_t index = 0;
  std::string why;
};

struct LoadedLog {
  std::vector<LogRecord> records;  // the lines that parsed, in file order
  std::vector<UnreadableLine> unreadable;
  bool truncated_tail = false;  // the file ends inside a line (no final newline)
  std::size_t lines = 0;        // complete lines
};

LoadedLog load_log_text(std::string_view text);
Result<LoadedLog> load_log(const std::string& path);
Result<std::string> read_log_file(const std::string& path);  // bounded by kMaxLogFileBytes

}  // namespace vigil
