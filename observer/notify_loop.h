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

struct ObserverStats {
  std::uint64_t events = 0;    // lines produced
  std::uint64_t dropped = 0;   // lines lost (kDrop only)
  std::uint64_t held = 0;      // times the workload waited for the supervisor
  std::uint64_t vanished = 0;  // notifications whose caller was gone before we read it
};

// How to read one trapped syscall's arguments.
struct PathArgs {
  int dirfd = -1, path = -1;    // the primary target (dirfd -1: relative to cwd)
  int dirfd2 = -1, path2 = -1;  // a second target (rename, link destination)
  int flags = -1;               // open flags argument
  bool open_how = false;        // openat2: flags inside struct open_how at `flags`
  bool exec = false;            // execve/execveat: argv at `path + 1`
  bool fd_only = false;         // f*xattr: the target is an fd (args[0])
};

class Observer {
 public:
  // `events_fd`: where event lines go (the supervisor's pipe). `mounts`: the sandbox's.
  static Result<Observer> create(UniqueFd listener, int events_fd, std::vector<Mount> mounts,
                                 Overflow overflow);
  int fd() const { return listener_.get(); }

  // Takes every pending notification. Returns false when the listener is gone (every
  // filtered process has exited).
  bool on_ready();
  // Writes out what is buffered (blocking unless kDrop). Call when idle and at exit.
  void flush();
  // Appends the observer.stats line and flushes.
  void finish();
  const ObserverStats& stats() const { return stats_; }

 private:
  Observer() = default;
  void handle_one();
  void queue(std::string line);

  UniqueFd listener_;
  int events_fd_ = -1;
  std::vector<Mount> mounts_;
  Overflow overflow_ = Overflow::kBlock;
  std::map<int, std::pair<std::string, PathArgs>> table_;  // syscall nr -> name, args
  std::string buffer_;
  ObserverStats stats_;
};

inline constexpr std::size_t kEventBufferBytes = 256 * 1024;

}  // namespace vigil::init
