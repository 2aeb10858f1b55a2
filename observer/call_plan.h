// The pure half of the gatekeeper: one notification + the caller's memory + the syscall
// table -> the call to perform. Everything the call depends on is read here, once, and
// the call is then performed on exactly these bytes (observer/emulate.h), so a thread
// that rewrites the path or open_how after the read changes nothing. No I/O except
// through CallerMemory (faked in tests).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "filters/seccomp_notify.h"
#include "supervisor/core/events/syscall_table.h"

namespace vigil::init {

inline constexpr std::int32_t kCwd = -100;  // AT_FDCWD

struct PlannedPath {
  std::string path;         // the bytes the caller passed (maybe relative, maybe empty)
  std::int32_t dirfd = kCwd;
};

struct CallPlan {
  enum class Kind {
    kPerform,   // vigil-init performs the call (path-based)
    kContinue,  // the kernel runs it (exec, fd-based): nothing it reads can race
    kFail,      // answer `error` without performing anything (unreadable arguments)
    kGone,      // the caller left the call while we read: no answer, no record
  };
  Kind kind = Kind::kGone;
  const WriteSyscall* row = nullptr;
  int error = 0;          // kFail: the errno the caller gets
  std::string why;        // kFail: for the record's reason
  PlannedPath target;     // the name written (for rename/link: the new name)
  bool has_from = false;  // rename/link: `from` is the old name; symlink: its contents
  PlannedPath from;
  bool on_fd = false;  // the target is the fd `target.dirfd` itself (fd-based, futimens,
                       // AT_EMPTY_PATH)
  std::uint64_t flags = 0;     // recorded as fs.write.flags (open flags, AT_*, RENAME_*)
  std::uint64_t resolve = 0;   // openat2's RESOLVE_* bits
  std::uint64_t at_flags = 0;  // AT_SYMLINK_NOFOLLOW / AT_EMPTY_PATH / AT_SYMLINK_FOLLOW
  std::uint32_t mode = 0;
  // Whether the call is recorded: false for an open without write intent and for a bind
  // that makes no name (not AF_UNIX, abstract, autobind); both are performed unlogged.
  bool writes = true;
  std::uint64_t args[6] = {};  // the registers (uid, gid, dev, length, ...)
  // utime*: the times as timespec[2] (tv_nsec UTIME_NOW for a NULL pointer).
  std::int64_t times[4] = {0, (1L << 30) - 1, 0, (1L << 30) - 1};
  std::string xattr_name;
  std::string xattr_value;
  std::string address;  // bind: the struct sockaddr as read (at most a sockaddr_storage)
  std::vector<std::string> argv;  // exec
  bool argv_truncated = false;
};

// Reads and decides. `row` nullptr (a trapped call not in the table) gives kContinue.
CallPlan plan_call(const Notification& n, const WriteSyscall* row, CallerMemory& mem);

// Where a path that names one of the caller's own magic entries really points, decided
// on the bytes alone: /proc/self, /proc/thread-self, /proc/<caller>, /dev/fd,
// /dev/std{in,out,err}, in any spelling the kernel accepts (//proc, /proc/./self/,
// /dev/../proc/self). vigil-init resolves everything else itself under
// RESOLVE_NO_MAGICLINKS.
struct MagicRoute {
  enum class Kind {
    kNone,       // not one of these: resolve `rest` (== the path) as it is
    kCallerFd,   // the caller's fd `fd`, then `rest` (relative, maybe empty) under it
    kCallerCwd,  // the caller's cwd, then `rest`
    kCallerProc  // another entry of the caller's /proc directory: `rest` is the absolute
                 // path through /proc/<pid> (no magic link in it)
  };
  Kind kind = Kind::kNone;
  int fd = -1;
  std::string rest;
};
MagicRoute route_magic(std::string_view path, pid_t caller);

}  // namespace vigil::init
