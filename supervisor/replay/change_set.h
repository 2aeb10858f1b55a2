// What a session changed, per path, from its log alone (issue 17): the net result
// (created, modified, deleted, renamed), what the path was before the session and after
// it (the fs.image records: sizes, hashes, mode, owner, symlink target), the process that
// last changed it and every step on the way. `vigil replay --changes`, `--diff`, the
// HTML report's Changes section and `vigil undo` all read this one model.
//
// Pure: ChangeSetBuilder takes records in log order and keeps bounded state (kMaxPaths
// paths, kMaxSteps steps each, kMaxNamedProcesses process names), so a log of any size is
// read in bounded memory; what it could not keep is counted, never silently dropped.
//
// How "before" is known: the first record of a path in the log decides. A `pre` image
// (vigil-init takes one just before it changes or removes an existing name) is the
// session's before. A successful call that can only make a new name (O_CREAT without a
// pre image, mkdir, symlink, link, mknod, a rename onto a name that had no pre image) says
// it was absent. rmdir says it was a directory. Anything else (a chmod of a file nothing
// else touched, the source of a rename) says it existed, contents not recorded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "supervisor/core/events/event_schema.h"
#include "supervisor/core/fs/host_scope.h"

namespace vigil::changes {

// One call that changed the path (an allowed, successful fs.write naming it).
struct Step {
  std::uint64_t seq = 0;
  std::uint64_t t = 0;
  std::optional<std::uint64_t> cmd;  // the session's command id, if any
  std::int64_t pid = 0;
  // The pid's last proc.exec, joined (raw bytes; shared by the steps of one process);
  // null when the log did not show it.
  std::shared_ptr<const std::string> argv;
  std::string action;   // replay's action word: create, write, delete, rename, chmod, ...
  std::string syscall;
  std::string other;  // rename/link: "from X" or "to X"; symlink: "-> target"
};

// What a path was, as the log knows it. `type`: "absent", "file", "symlink", "other",
// "dir" (known from mkdir/rmdir/rename only: directories have no images) or "existed"
// (it was there, nothing more recorded). The image fields are set for file/symlink/other.
struct State {
  std::string type;
  events::FsImage image;  // its path is the path the image was taken of
  bool has_image() const { return type == "file" || type == "symlink" || type == "other"; }
  bool imaged() const { return !image.phase.empty(); }  // from an fs.image record
  bool present() const { return type != "absent"; }
};

enum class Net { kCreated, kModified, kDeleted, kRenamed };
const char* to_string(Net n);

struct PathChange {
  std::string path;
  Net net = Net::kModified;
  std::string renamed_from;  // kRenamed: the name it had before the session
  bool replaced = false;     // kRenamed: it landed on a name that existed before
  std::optional<State> replaced_before;  // ... and what that name was
  bool content_changed_after_rename = false;
  std::optional<State> before;  // none: the log does not say
  std::optional<State> after;   // none: the log does not say
  std::vector<Step> steps;      // in log order, at most kMaxSteps
  std::uint64_t more_steps = 0;  // past kMaxSteps
  std::uint64_t last_seq = 0;    // of its last step (undo goes backwards by this)
  bool best_effort = false;      // an image of it was taken without the gatekeeper
};

struct ChangeSet {
  std::vector<PathChange> paths;    // sorted by path
  std::uint64_t unlisted_paths = 0;  // paths past kMaxPaths (not followed)
  std::uint64_t temporary = 0;       // made and removed again within the session
  std::uint64_t unchanged = 0;       // written back as they were
  bool capture_seen = false;         // the log has fs.image records at all
  std::string session;               // the session id (names the content store)
  // Names the sandbox wrote in its own trees (/dev/shm, its temp dir): not the host's,
  // left out (host_scope.h).
  std::uint64_t sandbox_only = 0;
  HostScope scope;              // the session's (session.start), or the legacy one
  bool scope_recorded = false;  // session.start recorded it
};

class ChangeSetBuilder {
 public:
  static constexpr std::size_t kMaxPaths = 100'000;
  static constexpr std::size_t kMaxSteps = 32;        // per path
  static constexpr std::size_t kMaxAllSteps = 500'000;  // in all
  static constexpr std::size_t kMaxNamedProcesses = 65536;

  // `session_base`: where session directories live, for a log that recorded no scope.
  explicit ChangeSetBuilder(const std::string& session_base = "/nonexistent/vigil-sessions")
      : scope_(legacy_host_scope(session_base)) {}
  void take(const events::Event& e);
  ChangeSet finish() const;

 private:
  struct Track {
    std::optional<State> before;
    std::optional<events::FsImage> post;  // the last post image
    std::string sim;  // what the write records say it is now: absent, file, dir, ...
    // Whose pre-session thing is at this path now: none = its own (if it had one),
    // "" = something made in the session, "X" = what X was (moved here by a rename).
    std::optional<std::string> origin;
    bool changed_since_move = false;  // written, chmod'ed, ... after it was moved here
    std::vector<Step> steps;
    std::uint64_t more_steps = 0;
    std::uint64_t last_seq = 0;
    bool best_effort = false;
  };
  Track* track(const std::string& path);
  void on_write(const events::Event& e, const events::FsWrite& w);
  void add_step(Track* t, const events::Event& e, const events::FsWrite& w, std::string other);

  std::map<std::string, Track> tracks_;
  HostScope scope_;
  bool scope_recorded_ = false;
  std::set<std::string> sandbox_only_;
  std::uint64_t unlisted_ = 0;
  std::uint64_t all_steps_ = 0;
  bool capture_seen_ = false;
  std::string session_;
  std::map<std::pair<std::uint64_t, std::int64_t>, std::shared_ptr<const std::string>> argv_;  // (cmd, pid)
};

}  // namespace vigil::changes
