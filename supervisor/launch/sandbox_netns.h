// One change to the sandbox's own network namespace, made from outside before bwrap lets
// vigil-init run (vigil.network.capture): its ip_unprivileged_port_start lowered, so that
// vigil-init, which holds no capability, can bind the DNS stub to 127.0.0.1:53
// (observer/dns_stub.h).
//
// Why from here: bwrap drops every capability (--cap-drop ALL), and unprivileged it makes
// the network namespace under an outer user namespace of its own, so even a capability
// added back inside would not count there (measured: --cap-add CAP_NET_BIND_SERVICE still
// gets EACCES on port 53). vigil, as the user that made those namespaces, holds every
// capability in them: a forked child joins the namespace's owning user namespace and the
// network namespace and writes the one sysctl. Root does the same (the join of its own
// user namespace is skipped). The sysctl is the namespace's own: nothing of the host
// changes, and in a namespace with only `lo` a low port reaches nothing new.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <thread>

#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil {

// Sets net.ipv4.ip_unprivileged_port_start to `port` in the network namespace of
// `sandbox_pid`, in two halves so that the work overlaps the launch check (about a
// millisecond off every captured launch): start_lowering() starts it (a forked child,
// async-signal-safe: it only joins, opens and writes; as root, a thread),
// finish_lowering() waits for it and says what failed. Every started lowering must be
// finished (its child is reaped there).
struct PortLowering {
  pid_t child = -1;
  UniqueFd net, owner;  // the namespaces the child joins
  std::string value;    // what it writes
  // Root joins no user namespace: a thread of ours does it (setns of a network namespace
  // is per thread), without a fork's copy of the supervisor. Its step code, 0 when done.
  std::thread thread;
  std::shared_ptr<int> thread_code;
  PortLowering() = default;
  PortLowering(PortLowering&&) = default;
  PortLowering& operator=(PortLowering&&) = delete;
  ~PortLowering() {
    if (thread.joinable()) thread.join();
  }
};
Result<PortLowering> start_lowering(pid_t sandbox_pid, int port);
Result<void> finish_lowering(PortLowering& l);

}  // namespace vigil
