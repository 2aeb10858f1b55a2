// The caller's view, for the gatekeeper's calls (observer/emulate.h): where a caller's name
// starts (its cwd, a dirfd fetched with pidfd_getfd, or one of its magic links), the name
// resolved to its parent directory without following a magic link, and the real names
// the records carry. Internal to the emulator (emulate.cc, emulate_open.cc).
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <cerrno>
#include <cstdint>
#include <string>
#include <utility>

#include "observer/call_plan.h"
#include "observer/cwd_cache.h"
#include "observer/emulate_types.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil::init::caller_view {

// "/proc/self/fd/N" for our own fd N.
std::string self_fd(int fd);
// The name of one of our fds (its magic link's text), "" when it has none.
std::string fd_name(int fd);
// The errno for a caller vigil-init cannot look into (EACCES/EPERM from /proc or
// pidfd_getfd: it made itself non-dumpable): the call is refused, never performed blind.
int reach_errno(int err);
long openat2_(int dir, const char* path, std::uint64_t flags, std::uint64_t mode,
              std::uint64_t resolve);
// The caller's fd `fd`, fetched with pidfd_getfd; empty with *err set when it cannot be.
UniqueFd caller_fd(pid_t pid, int fd, int* err);

// Where a caller's relative name starts, and what stays to resolve from there.
struct Base {
  UniqueFd fd;        // the start directory (or, kCallerFd, the caller's file)
  int dir = AT_FDCWD;  // fd.get(), or AT_FDCWD for an absolute path
  std::string rest;
  bool caller_fd = false;  // rest is under (or, empty, is) the caller's fd
  int caller_fd_number = -1;
  int error = 0;
  std::string why;
};

Base base_of(const PlannedPath& p, pid_t pid, CwdCache* cwds);

// One name of a call, resolved to its parent directory (no magic link followed there).
struct At {
  Base base;
  UniqueFd parent;
  std::string last;
  int error = 0;
  std::string parent_name;  // for the record
  std::string name() const {
    if (parent_name.empty()) return {};
    return parent_name == "/" ? "/" + last : parent_name + "/" + last;
  }
};

At locate(const PlannedPath& p, pid_t pid, CwdCache* cwds = nullptr);

// The target of a call that follows a symlink in its last name, opened O_PATH under
// RESOLVE_NO_MAGICLINKS (a dangling link: ENOENT, as the call would say).
UniqueFd follow(const At& at, int* err);

// The real name `p` lands on (its parent resolved, the last name as spelt).
std::string name_in(const PlannedPath& p, pid_t pid, CwdCache* cwds);
// The name a call that follows its last symlink lands on, for the record of a call that
// failed (links followed by us, never through a magic link, up to the kernel's 40).
std::string followed_name(const PlannedPath& p, pid_t pid, CwdCache* cwds);

// A call vigil-init refused before performing it: `why` is already in out->why.
inline Performed refused(Performed* out, int error, std::string resolved) {
  out->error = error;
  out->resolved = std::move(resolved);
  return std::move(*out);
}

inline void done(Performed* out, long rc) {
  if (rc < 0) {
    out->error = errno;
  } else {
    out->value = rc;
  }
}

// Whether the caller's fd table can take the fd an open will install (SECCOMP_IOCTL_NOTIF_ADDFD
// allocates it in the caller, under the caller's RLIMIT_NOFILE and fs.nr_open): 0, EMFILE
// when every slot below that bound is taken, or the errno that kept vigil-init from
// telling. Asked before an open creates or truncates anything, so that a caller that
// could not receive the fd gets EMFILE with nothing changed, as from the kernel.
int fd_room(pid_t pid);

// The caller's umask for one creating call, as vigil-init's own (per thread group, so
// only on the thread that performs, and put back after). The kernel then applies it as it
// would for the caller: not at all where the parent has a default ACL, whose mask the
// mode narrows instead (vigil-init runs with umask 0 otherwise).
class CallerUmask {
 public:
  explicit CallerUmask(mode_t mask) : old_(::umask(mask)) {}
  ~CallerUmask() { ::umask(old_); }
  CallerUmask(const CallerUmask&) = delete;
  CallerUmask& operator=(const CallerUmask&) = delete;

 private:
  mode_t old_;
};

// The refusal of a call whose target vigil-init cannot name (its path is longer than
// PATH_MAX): ENAMETOOLONG, as the kernel answers for a path that long, never a call
// performed and recorded with no name.
Performed unnamed(Performed* out);

// bind() of the caller's socket: emulate_bind.cc.
Performed perform_bind(const CallPlan& plan, pid_t pid, const Gate* gate, CwdCache* cwds);

// The open family (open, openat, openat2, creat): emulate_open.cc.
Performed perform_open(const CallPlan& plan, pid_t pid, bool may_block, const Gate* gate,
                       CwdCache* cwds, const Keep* keep);

}  // namespace vigil::init::caller_view
