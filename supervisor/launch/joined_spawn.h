// A spawn that joins a network namespace (and, unprivileged, the user namespace that owns
// it) before it execs: how an agent session's bwrap starts inside the session's shared
// namespace (supervisor/launch/session_netns.h) with --share-net. posix_spawn cannot join
// a namespace in the child, and a fork would copy vigil's address space; this is a
// clone(CLONE_VM | CLONE_VFORK) like posix_spawn's own, whose child runs only
// async-signal-safe calls before execve.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <utility>
#include <vector>

#include "supervisor/core/base/result.h"
#include "supervisor/launch/session_netns.h"

namespace vigil {

struct JoinedSpawn {
  const char* path = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  // dup2(from, to) in order; from == to clears FD_CLOEXEC (as posix_spawn's adddup2).
  std::vector<std::pair<int, int>> dups;
  sigset_t mask{};  // the child's signal mask at exec
  NetnsJoin join;   // joined before the dups: user namespace first, then the network one
};

// The child is in its own process group, every caught signal (and SIGPIPE) back to its
// default. Errc::kSystem naming the step when the child could not get to its exec.
Result<pid_t> spawn_joined(const JoinedSpawn& spawn);

}  // namespace vigil
