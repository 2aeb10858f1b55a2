// The caller's cwd for the gatekeeper, kept per task while it stays the same directory.
// Emulating a relative name needs the caller's cwd; opening /proc/PID/cwd for every call
// walks three names in procfs, allocates a file and closes it again, a fifth of vigil-init's
// time per trapped write. Kept per task instead: an fd of the /proc/PID directory (bound to
// that very task), a pidfd of it, and an O_PATH fd of the cwd with its identity (device,
// inode, mount id; two binds of one directory, one read-only, share device and inode).
//
// Whether a kept cwd is still the caller's, without a look at /proc per call: every call
// that changes a cwd (chdir, fchdir: the changes_cwd rows of ordered_syscalls(),
// supervisor/core/events/syscall_table.h) is trapped, and the loop hands it here
// (chdir_begins) before it answers CONTINUE. While no such call is in flight, no task's
// cwd has changed since its entry was made, so the entry is trusted: its only check is
// that its task still lives (a pidfd signal 0, so a reused pid never finds another task's
// entry). Once a chdir-family call from task T is answered, the kernel runs it at some
// moment the loop cannot see, and it changes the cwd of every task sharing T's fs_struct
// (threads, or clone(CLONE_FS) children, which the loop cannot tell apart). So from then
// on every use checks the entry as before this protocol (a statx of "cwd" under the kept
// /proc/PID fd: a changed identity is looked up afresh), and T is pending. Any later
// notification from T (saw_call) proves its chdir has returned: T leaves the pending set.
// When the set is empty every call answered has run, and every entry is dropped (one made
// while a chdir was in flight may hold a sharer's old cwd, and a trusted entry is never
// checked again); the cache trusts again. A pending task that makes no trapped call for a
// while (a shell that cd'd and now waits for a build) or ends has returned from its call
// as well: the set's tasks are looked at (their kept /proc/TID) at most every kRecheckMs
// while the set is not empty, and one gone, a zombie, or in another call by its
// /proc/TID/syscall is done, so none holds the cache in checking mode for long. An exec
// is handed here too: a thread that does not lead its process takes over the leader's
// number when it execs, with its own cwd if it had unshared it. chroot changes no cwd;
// pivot_root, setns and a new mount namespace, which would, are refused by the sandbox's
// namespaces filter. Not thread-safe: the notify loop's thread only.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "supervisor/core/base/unique_fd.h"

namespace vigil::init {

class CwdCache {
 public:
  // The caller's cwd, an O_PATH fd the cache keeps (valid until the next saw_call: one
  // call may ask more than once, and an entry dropped meanwhile keeps its fd open till
  // then), or -1 with *err set to why it could not be reached (/proc/PID/cwd's errno).
  int get(pid_t pid, int* err);

  // A call (syscall number `nr`) from task `tid` that may change a cwd is about to be
  // answered CONTINUE.
  void chdir_begins(pid_t tid, int nr);
  // Any trapped call from task `tid`, read before anything uses a cwd for it.
  void saw_call(pid_t tid);
  // No chdir-family call in flight: entries are trusted without a statx (for tests).
  bool trusting() const { return pending_.empty(); }

 private:
  struct Identity {
    std::uint64_t dev_major = 0, dev_minor = 0, ino = 0, mnt = 0;
    bool operator==(const Identity&) const = default;
  };
  struct Entry {
    UniqueFd proc_dir;  // /proc/PID
    UniqueFd pidfd;     // the task's own (task_pidfd), invalid: checked by statx always
    UniqueFd cwd;       // O_PATH
    Identity id;
  };
  // The identity of what `name` under `dir` names (following it), or an errno.
  static int identify(int dir, const char* name, int flags, Identity* out);
  // Bounded: more live callers than this and the cache starts over (fds are finite).
  static constexpr std::size_t kMaxEntries = 64;
  // Looks at the pending tasks (at most every kRecheckMs): those past their call are done.
  void recheck_pending();
  void settle_if_done();
  static constexpr std::int64_t kRecheckMs = 5;
  std::unordered_map<pid_t, Entry> entries_;
  struct Pending {
    UniqueFd proc_dir;  // its /proc/TID
    int nr = -1;        // the call in flight
    bool gone = false;  // its /proc/TID was already gone
  };
  std::unordered_map<pid_t, Pending> pending_;
  std::int64_t checked_ms_ = 0;
  std::vector<UniqueFd> retired_;  // cwd fds of dropped entries, closed at the next call
};

}  // namespace vigil::init
