// The observer: vigil-init's side of the USER_NOTIF listener. For each trapped call it
// reads the path argument(s) from the caller's memory, answers CONTINUE (the command's
// behaviour never changes), judges the write from the mount table, and queues one JSON
// event line for the supervisor. What it reads is attacker-controlled and racy: it is a
// witness, and nothing it concludes gates anything.
//
// Lossless by default: events are buffered up to a bound, and a full buffer is written out
// with a blocking write before the next notification is taken, so a slow supervisor
// holds the workload instead of losing events. With Overflow::kDrop the write is
// non-blocking and what does not fit is counted as dropped.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "observer/mount_table.h"
#include "supervisor/core/unique_fd.h"

namespace vigil::init {

enum class Overflow { kBlock, kDrop };

struct ObserverOptions {
  Overflow overflow = Overflow::kBlock;
  bool sync_wake_up = true;  // SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP where the kernel has it
  // Lines wait at most this long before they go to the supervisor. Every round trip
  // leaves the observer idle (the caller runs next), so "write when idle" would be one
  // write per event; batching is what keeps a trapped call at a few microseconds.
  int flush_after_ms = 20;
};

struct ObserverStats {
  std::uint64_t events = 0;    // lines produced
  std::uint64_t dropped = 0;   // lines lost (kDrop only)
  std::uint64_t held = 0;      // times the workload waited for the supervisor
  std::uint64_t vanished = 0;  // notifications whose caller was gone before we read it
  bool sync_wake_up = false;   // the kernel took SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
};

// How to read one trapped syscall's arguments.
struct PathArgs {
  int dirfd = -1, path = -1;    // the primary target (dirfd -1: relative to cwd)
  int dirfd2 = -1, path2 = -1;  // a second target (rename, link destination)
  int flags = -1;               // open flags argument (O_NOFOLLOW decides following)
  // Calls that act on what a symlink in the last component points at (chmod, truncate,
  // setxattr, ...) rather than on the link itself (unlink, rename, lchown, ...)...
  bool follows = false;
  // ...unless this argument carries AT_SYMLINK_NOFOLLOW (fchownat, utimensat, fchmodat2).
  int at_flags = -1;
  bool open_how = false;  // openat2: flags inside struct open_how at `flags`
  bool exec = false;      // execve/execveat: argv at `path + 1`
  bool fd_only = false;   // f*xattr: the target is an fd (args[0])
  // utimensat/futimesat with a NULL path act on `dirfd`'s own file (futimens(), as tar
  // and cp -p call it after writing each file).
  bool null_path_is_fd = false;
};

class Observer {
 public:
  // `events_fd`: where event lines go (the supervisor's pipe). `mounts`: the sandbox's.
  static Result<Observer> create(UniqueFd listener, int events_fd, std::vector<Mount> mounts,
                                 const ObserverOptions& options);
  int fd() const { return listener_.get(); }

  // Called with poll()'s revents for the listener: answers one notification. Returns
  // false when the listener is gone (every filtered process has exited). Wait for the
  // listener with poll(), not epoll: only poll passes the kernel's same-CPU wake-up on.
  bool on_ready(short revents);
  // Milliseconds until the buffered lines are due (0: now; -1: nothing buffered).
  int flush_timeout_ms() const;
  // Writes out what is buffered (blocking unless kDrop). Call when due and at exit.
  void flush();
  // Appends the observer.stats line and flushes.
  void finish();
  const ObserverStats& stats() const { return stats_; }

 private:
  Observer() = default;
  void handle_one();
  void queued();  // a line was appended to buffer_

  UniqueFd listener_;
  int events_fd_ = -1;
  std::vector<Mount> mounts_;
  ObserverOptions options_;
  std::map<int, std::pair<std::string, PathArgs>> table_;  // syscall nr -> name, args
  std::string buffer_;
  ObserverStats stats_;
  std::int64_t oldest_ms_ = -1;  // when the oldest buffered line was queued
  bool reader_gone_ = false;     // a write failed for good: the supervisor is gone
  std::size_t owed_ = 0;         // bytes at the front of buffer_: the rest of a cut line
};

inline constexpr std::size_t kEventBufferBytes = 256 * 1024;

}  // namespace vigil::init
