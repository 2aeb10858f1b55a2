// The I/O half of the gatekeeper: performs a planned call (observer/call_plan.h) from
// the caller's view, never vigil-init's. The cwd is /proc/PID/cwd, a dirfd is fetched
// with pidfd_getfd, the umask is /proc/PID/status's, and /proc/self, /proc/thread-self,
// /proc/<caller>/fd/N and /dev/fd/N mean the caller's own entries (call_plan's
// route_magic). Every other name is resolved with RESOLVE_NO_MAGICLINKS: no magic link
// is followed in vigil-init's view. vigil-init runs with umask 0 and applies the
// caller's, since its own would otherwise be applied on top.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <string_view>

#include "observer/call_plan.h"
#include "observer/cwd_cache.h"
#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil::init {

struct Performed {
  std::int64_t value = 0;  // the call's return value when error == 0
  int error = 0;           // the errno the call failed with (0: it succeeded)
  UniqueFd fd;             // an open: ours, to install in the caller
  bool cloexec = false;    // the caller asked for O_CLOEXEC
  // The open would block (a FIFO with no peer yet): nothing was performed; run it again
  // with perform(..., /*may_block=*/true) on a thread of its own.
  bool would_block = false;
  std::string resolved;       // the target's real name in the sandbox's view, "" unknown
  std::string from_resolved;  // rename/link: the old name's
  std::string why;            // set when vigil-init itself could not reach the caller's view
};

// Asked before a call creates a name (open with O_CREAT, mkdir, mknod, link, symlink,
// rename's new name), with the name's real path and, for a rename, the real path of what
// it moves there (whose content the new name gives a meaning to; "" for the other
// calls): a reason refuses it with EACCES.
using Gate = std::function<std::string(const std::string& name, const std::string& from)>;

// The pre-images' hooks (observer/capture.h). `before` is called just before a call
// changes or removes what a name is now (an open that truncates, unlink, rename over it,
// truncate), with where the call resolves it from: `rest` under `dir` ("" : `dir`
// itself), the call's RESOLVE_* bits, and whether a final symlink is followed. `opened`
// is called instead for an open for writing that changes nothing by itself (no O_TRUNC)
// and found the file there: with the fd it opened and its name, before the caller gets
// the fd (so before it can write), which costs no lookup of its own.
struct Keep {
  std::function<void(int dir, const std::string& rest, std::uint64_t resolve, bool follow)> before;
  std::function<void(int fd, const std::string& name)> opened;
};

// Performs `plan` (kind kPerform) for caller `pid`. With may_block false an open that
// would wait for a FIFO's peer comes back would_block instead of waiting. `cwds`: the
// notify loop's cache of callers' cwds (nullptr: /proc/PID/cwd is opened for this call).
Performed perform(const CallPlan& plan, pid_t pid, bool may_block = false,
                  const Gate* gate = nullptr, CwdCache* cwds = nullptr, const Keep* keep = nullptr);

// The file the caller's fd `fd` names (its magic link's text, fetched with
// pidfd_getfd), "" when it cannot be fetched.
std::string caller_fd_target(pid_t pid, int fd);

// The real name `p` lands on for the caller (its parent resolved, the last name as
// spelt), for records of calls vigil-init does not perform (execs, witnessed opens).
std::string name_of(const PlannedPath& p, pid_t pid);

// The real name a call on `p` lands on for the caller: its parent resolved and, with
// `follow`, the last name's symlinks followed (as an open without O_NOFOLLOW would;
// never through a magic link). "" when it cannot be told. For records of calls
// vigil-init lets the kernel run (observer/hidden_reads.h).
std::string resolved_name(const PlannedPath& p, pid_t pid, bool follow, CwdCache* cwds);

// The caller's umask from /proc/PID/status; an error when it cannot be read (the call
// that needed it is then refused, never performed under a guessed mask).
Result<mode_t> caller_umask(pid_t pid);
// The Umask line of a /proc/PID/status text (pure, for tests).
Result<mode_t> umask_from_status(std::string_view status);
// Reads /proc/PID/<file> (one read, up to size - 1 bytes) into buf, NUL-terminated: the
// bytes read, 0 when it cannot be read.
std::size_t read_proc_file(pid_t pid, const char* file, char* buf, std::size_t size);

}  // namespace vigil::init
