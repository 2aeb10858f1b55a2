// The I/O half of the unix-socket broker (network.allowUnixSockets; the rule is
// observer/unix_rules.h). With the broker's filter (filters/filter_specs.h, unix-broker)
// every connect() and every AF_UNIX datagram socket() reaches vigil-init here.
//
// connect(fd, addr, len), for any family:
//   1. pidfd_open(caller), then the notification id is checked (the pid is still the
//      caller), then the caller's socket is fetched with pidfd_getfd and the address is
//      copied once (len bounded as the kernel bounds it); the id is checked again.
//   2. Everything is decided on that copy and performed on that fetched socket: the
//      caller can rewrite its memory or dup2() another socket onto the number all it
//      likes, nothing it does after the copy reaches the connect. (An answer of CONTINUE
//      would let the kernel read both again: never given here.)
//   3. Not AF_UNIX: connected as asked (the sandbox's own network namespace decides).
//      AF_UNIX to a path: the name is opened O_PATH in vigil-init's view, which is the
//      caller's (one mount namespace; a relative name from the caller's cwd; no magic
//      link followed, so /proc/self cannot mean vigil-init), its canonical path is
//      decided, and vigil-init connects the fetched socket to that very inode through
//      /proc/self/fd/N: a name swapped after the decision is never looked up again.
//   4. The caller gets the connect's own result (0, EINPROGRESS, ECONNREFUSED, ...).
// A refusal is EACCES (EPERM for socket()) and a net.unix line. A name that reaches no
// socket gets the kernel's own answer (ENOENT, ECONNREFUSED) and no line: glibc tries
// /var/run/nscd/socket on every user lookup, and that is no violation.
//
// The server sees vigil-init as its peer (SO_PEERCRED: the same uid and gid as the
// command, the pid of the sandbox's PID 1).
//
// The rest of the class (sendto/sendmsg with an address, bind, socketpair, io_uring, fd
// passing) and how each is closed: supervisor/core/events/syscall_table.cc (socket rows).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "filters/seccomp_notify.h"
#include "observer/cwd_cache.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil::init {

// One brokered call, prepared (everything read and decided) but not yet connected.
struct UnixCall {
  enum class Step {
    kAnswer,   // answer value/error now (refused, the kernel's own error, socket())
    kConnect,  // connect `socket` to `address` and answer with its result
    kGone,     // the caller left: no answer, no line
  };
  Step step = Step::kAnswer;
  std::int64_t value = 0;
  int error = 0;
  bool is_socket_call = false;  // socket(): `error` 0 means continue
  UniqueFd socket;              // kConnect: the caller's socket, fetched
  UniqueFd target;              // kConnect to a path: the socket file, O_PATH
  std::string address;          // kConnect: the sockaddr bytes to connect to
  bool blocking = false;        // the socket waits in connect(): done on a thread
  // The line (only for AF_UNIX).
  bool record = false;
  std::string type, path, resolved, reason;
  bool allowed = false;
};

// Reads and decides one notification (connect() or socket()). `allowed`: the list as
// given to vigil-init (each path is canonicalised here, as vigil-init sees it now).
UnixCall prepare_unix_call(const Notification& n, bool is_connect, NotifyChannel& listener,
                           const std::vector<std::string>& allowed, CwdCache* cwds);

// Performs a kConnect (may block: the caller's socket is blocking), appends the net.unix
// line (when the call is one) to `out` (under `out_mu` when given: a thread of its own
// hands its lines to the loop), then answers the caller. The line is queued before the
// answer: once every process has ended the loop writes what it holds and exits, and the
// answer can be what lets the last one end.
void finish_unix_call(UnixCall call, const Notification& n, NotifyChannel& listener,
                      std::string* out, std::mutex* out_mu = nullptr);

}  // namespace vigil::init
