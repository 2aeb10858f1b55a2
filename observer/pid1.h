// vigil-init's life as PID 1 of the sandbox's PID namespace: start the worker, forward
// signals to it, reap every process that is re-parented to us, and exit with the
// worker's status (128+N for a signal) -- at which point the kernel kills whatever else
// is left in the namespace, so nothing outlives the command.
//
// Runs in a single-threaded process; no exceptions; after fork() only async-signal-safe
// calls until exec.
#pragma once

#include <functional>
#include <vector>

#include "observer/bridge.h"
#include "observer/dns_stub.h"
#include "observer/notify_loop.h"

namespace vigil::init {

// Called in the forked worker before it execs: must not return on success (exec), and
// returns an exit status to _exit() with when something failed.
using WorkerMain = std::function<int()>;

// Makes this process non-dumpable (no ptrace, no /proc/1/environ for the worker), forks
// the worker, supervises it, and relays the proxy bridge's connections (when `bridge` is
// not null) until the worker exits. Returns the status vigil-init must exit with.
struct ObserverSetup {
  int listener_channel = -1;  // our end of the socketpair the worker sends the listener on
  int events_fd = -1;         // where event lines go
  ObserverOptions options;
  // The mount table already read (vigil-init's check of the planned mounts); none: read
  // after the fork. bwrap finished every mount before it ran us, so it is final either way.
  const std::vector<Mount>* mounts = nullptr;
};
// `dns` (vigil.network.capture; may be null): the DNS stub, answered on the loop's thread.
int run_as_pid1(const WorkerMain& worker, Bridge* bridge, const ObserverSetup* observer,
                DnsStub* dns = nullptr);

}  // namespace vigil::init
