// The per-session directory on the host: <base>/<random>/ with tmp/ (the command's
// TMPDIR, bound writable).
// <base> is $XDG_RUNTIME_DIR/vigil when that is ours, else /tmp/vigil-<uid>; it must be a
// real directory owned by us and closed to others, or we refuse (someone else could have
// planted it). It never lives under TMPDIR=/dev/shm, which bwrap's fresh /dev would hide.
//
// A live session holds an flock on <session>/lock for as long as it runs. A vigil that was
// killed (SIGKILL, OOM) cannot clean up after itself, so every new session first sweeps
// <base>: a session directory whose lock nobody holds is stale; its placeholders (listed
// in <session>/placeholders) are removed from the workspace if they are still as bwrap
// (or vigil) made them, then the directory goes.
//
// A placeholder is removed only while no live session may rely on it. A session started
// while a placeholder existed took it for the user's own (empty) file and capped it with
// a read-only bind; unlinking that name would detach the bind in its namespace too (the
// kernel does so for a mount point of another namespace), and its command could then
// write the protected name for real. So every session holds, shared, a lock per writable
// root (<base>/roots/<hash of the path>) from before its scan to its end, and removing a
// placeholder (at a session's end, or in a sweep) takes the locks of the placeholder's
// directory and of each of its ancestors exclusively: a session whose root contains it
// holds one of them. What cannot be removed yet stays listed in the session's directory
// for a later sweep. The lock files stay (one per path ever used as a root or as a
// placeholder's ancestor): removing one while another process opens it would break the
// exclusion.
#pragma once

#include <string>
#include <vector>

#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/launch/session_base.h"  // <base>: session_base_dir()
#include "supervisor/backstop/remove_tree.h"

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
  // An empty read-only regular file, bound over the kernel files a sandbox must not read
  // (BwrapInputs::empty_file): they read as empty, as in a container.
  std::string empty_file() const { return path_ + "/empty"; }

  // Records the placeholder files bwrap is about to create in the workspace, so that a
  // later session can remove them if this one is killed before it does.
  Result<void> record_placeholders(const std::vector<std::string>& paths) const;

  // Holds, shared, the lock of each writable root until this object goes: call it after
  // the policy is loaded and before the scan (PlanRequest::before_scan).
  Result<void> hold_roots(const std::vector<std::string>& roots);

  // At the end of the session, after the sandbox is gone: releases this session's roots
  // and removes its placeholders that no other live session may rely on. The others
  // stay, listed in this directory, which then outlives this object for a later sweep.
  void finish(const std::vector<std::string>& placeholders);

 private:
  SessionDir() = default;
  std::string base_, path_, tmp_, id_;
  UniqueFd lock_;                 // flock'ed while the session lives
  std::vector<UniqueFd> roots_;   // the writable roots' locks, shared
  bool leave_for_sweep_ = false;  // finish() left placeholders behind
  bool fresh_base_ = false;       // base_ is this session's own (the fixed one was taken)
};


// Removes the stale sessions under `base` (see above); what it could not remove is left
// for the next sweep. Returns how many stale sessions it removed.
std::size_t sweep_stale_sessions(const std::string& base);

// Removes each path that is still a placeholder as it was made (sandbox_plan.h), whose
// status last changed no earlier than `not_before` and no later than `not_after`
// (seconds since the epoch), and that no live session under `base` may rely on (see
// above). Anything else (a file the user has since written, or touched) stays. Returns
// how many untouched placeholders had to stay because a session may rely on them.
std::size_t remove_placeholder_files(const std::string& base, const std::vector<std::string>& paths,
                                     long not_before, long not_after);

}  // namespace vigil
