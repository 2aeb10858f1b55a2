// The caller's cwd for the gatekeeper, kept per process while it stays the same directory.
// Emulating a relative name needs the caller's cwd; opening /proc/PID/cwd for every call
// walks three names in procfs, allocates a file and closes it again, a fifth of vigil-init's
// time per trapped write. Kept per pid instead: an fd of the /proc/PID directory (bound to
// that very process: once it is gone, lookups under it fail, so a reused pid can never
// find the old entry) and an O_PATH fd of the cwd with its identity (device, inode, mount
// id). Each use checks that identity with one statx of "cwd" under the kept /proc/PID fd,
// so a chdir since (by any thread sharing the cwd) or a move to another bind mount of the
// same directory is seen, and the cache cannot name a directory the caller has left. The
// mount id is compared too: two binds of one directory (one read-only) share device and
// inode. Not thread-safe: the notify loop's thread only.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <unordered_map>

#include "supervisor/core/base/unique_fd.h"

namespace vigil::init {

class CwdCache {
 public:
  // The caller's cwd, an O_PATH fd the cache keeps (valid until the next get), or -1 with
  // *err set to why it could not be reached (/proc/PID/cwd's errno).
  int get(pid_t pid, int* err);

 private:
  struct Identity {
    std::uint64_t dev_major = 0, dev_minor = 0, ino = 0, mnt = 0;
    bool operator==(const Identity&) const = default;
  };
  struct Entry {
    UniqueFd proc_dir;  // /proc/PID
    UniqueFd cwd;       // O_PATH
    Identity id;
  };
  // The identity of what `name` under `dir` names (following it), or an errno.
  static int identify(int dir, const char* name, int flags, Identity* out);
  // Bounded: more live callers than this and the cache starts over (fds are finite).
  static constexpr std::size_t kMaxEntries = 64;
  std::unordered_map<pid_t, Entry> entries_;
  UniqueFd uncached_;  // a cwd whose identity could not be read: for this call only
};

}  // namespace vigil::init
