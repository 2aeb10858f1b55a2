// What a session changed, per path, as data (issue 17): the model that
// supervisor/replay/change_set.h builds from a log, and that `vigil replay --changes`,
// `--diff`, the HTML report and the undo planner (supervisor/backstop/undo_plan.h) read.
// It lives below both (log/): replay builds it, backstop plans from it, neither includes
// the other. Pure data and two pure helpers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
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
inline const char* to_string(Net n) {
  switch (n) {
    case Net::kCreated:
      return "created";
    case Net::kModified:
      return "modified";
    case Net::kDeleted:
      return "deleted";
    case Net::kRenamed:
      return "renamed";
  }
  return "modified";
}

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

// Whether `c` is one of `only` (absolute paths; a directory names what is below it, a
// rename counts under either name); an empty `only` selects every change.
inline bool path_under(const std::string& path, const std::string& dir) {
  if (path == dir) return true;
  const std::string d = dir.size() > 1 && dir.back() == '/' ? dir.substr(0, dir.size() - 1) : dir;
  return path.size() > d.size() && path.compare(0, d.size(), d) == 0 &&
         (d == "/" || path[d.size()] == '/');
}
inline bool selected(const PathChange& c, const std::vector<std::string>& only) {
  if (only.empty()) return true;
  for (const std::string& o : only) {
    if (path_under(c.path, o) || (!c.renamed_from.empty() && path_under(c.renamed_from, o)))
      return true;
  }
  return false;
}

}  // namespace vigil::changes
