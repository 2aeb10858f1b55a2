// The per-session directory on the host: <base>/<random>/ with tmp/ (the command's
// TMPDIR, bound writable).
// <base> is $XDG_RUNTIME_DIR/vigil when that is ours, else /tmp/vigil-<uid>; it must be a
// real directory owned by us and closed to others, or we refuse (someone else could have
// planted it). It never lives under TMPDIR=/dev/shm, which bwrap's fresh /dev would hide.
//
// A live session holds an flock on <session>/lock for as long as it runs. A vigil that was
// killed (SIGKILL, OOM) cannot clean up after itself, so every new session first sweeps
// <base>: a session directory whose lock nobody holds is stale; its placeholders (listed
// in <session>/placeholders) are removed from the workspace if they are still the empty
// files bwrap made, then the directory goes.
//
// Placeholders are removed only by a session that is alone. Another session started
// while a placeholder existed took it for the user's own (empty) file and capped it with
// a read-only bind; unlinking that name would detach the bind in its namespace too (the
// kernel does so for a mount point of another namespace), and its command could then
// write the protected name for real. So every session holds <base>/sessions.lock shared
// from before its scan to its end, and removing placeholders (a sweep, or a session's
// own at its end) needs it exclusively: a session that ends while others run leaves its
// placeholders listed in its directory, and the last one to end removes them all.
#pragma once

#include <string>
#include <vector>

#include "supervisor/core/result.h"
#include "supervisor/core/unique_fd.h"

namespace vigil {

class SessionDir {
 public:
  static Result<SessionDir> create();
  SessionDir(SessionDir&& o) noexcept;
  SessionDir& operator=(SessionDir&&) = delete;
  SessionDir(const SessionDir&) = delete;
  ~SessionDir();  // removes the whole session directory (the temp dir goes with it)

  const std::string& path() const { return path_; }
  const std::string& tmp() const { return tmp_; }
  const std::string& id() const { return id_; }
  std::string proxy_socket() const { return path_ + "/proxy.sock"; }

  // Records the placeholder files bwrap is about to create in the workspace, so that a
  // later session can remove them if this one is killed before it does.
  Result<void> record_placeholders(const std::vector<std::string>& paths);

  // At the end of the session, after the sandbox is gone: true when no other session is
  // running, and then this one may remove its placeholders (the sessions that ended
  // before it, while it ran, had left theirs: they are removed here). False: they stay,
  // listed in this directory, which outlives this object for a later sweep.
  bool finish_alone();

 private:
  SessionDir() = default;
  std::string base_, path_, tmp_, id_;
  UniqueFd lock_;                 // flock'ed while the session lives
  UniqueFd sessions_;             // <base>/sessions.lock, shared while the session lives
  bool placeholders_ = false;     // a non-empty placeholder list was recorded
  bool leave_for_sweep_ = false;  // finish_alone() found company
};

// Removes the stale sessions under `base` (see above); what it could not remove is left
// for the next sweep. Returns how many stale sessions it removed.
std::size_t sweep_stale_sessions(const std::string& base);

// Removes each path that is still an empty regular file whose status last changed no
// earlier than `not_before` and no later than `not_after` (seconds since the epoch):
// bwrap's placeholder, untouched since. Anything else (a file the user has since written,
// or touched) stays.
void remove_placeholder_files(const std::vector<std::string>& paths, long not_before,
                              long not_after);

// Removes a tree without following symlinks or crossing mount points.
Result<void> remove_tree(const std::string& path);

}  // namespace vigil
