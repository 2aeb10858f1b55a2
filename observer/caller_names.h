// Names in the caller's view, for the records of calls vigil-init performs or lets the
// kernel run: what a caller's fd or path lands on, and the caller's umask. Defined in
// caller_view.cc beside the view they read; declared here, below both the emulator
// (emulate.h) and that view, so that neither needs the other's header for them.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "observer/call_plan.h"
#include "observer/cwd_cache.h"
#include "supervisor/core/base/result.h"

namespace vigil::init {

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
