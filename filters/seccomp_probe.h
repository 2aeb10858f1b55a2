// What this kernel's seccomp can do for the observer, found by trying it in a forked
// child (installing a filter is irreversible, so never in our own process).
#pragma once

#include <string>

namespace vigil {

struct SeccompFeatures {
  bool user_notif = false;          // SECCOMP_RET_USER_NOTIF (5.0)
  bool notif_continue = false;      // SECCOMP_USER_NOTIF_FLAG_CONTINUE (5.5), by a round trip
  bool wait_killable_recv = false;  // SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (5.19)
  bool sync_wake_up = false;        // SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (6.6)
  // SECCOMP_ADDFD_FLAG_SEND (5.14), by a round trip: vigil-init performs write-intent
  // calls itself (the gatekeeper); without it, it only witnesses them (best-effort).
  bool addfd_send = false;
  std::string error;                // why the probe itself failed, if it did
};

SeccompFeatures probe_seccomp();

}  // namespace vigil
