// One fd over a unix socketpair with SCM_RIGHTS: how the worker hands its seccomp
// listener to vigil-init before it execs the command.
#pragma once

#include "supervisor/core/base/unique_fd.h"

namespace vigil::init {

// Sends `fd` with a one-byte message. No allocation (the worker calls it after fork).
bool send_fd(int channel, int fd);

// Receives one fd sent by send_fd, close-on-exec; empty when none came (the sender failed
// or closed the channel) or the message was not exactly one fd.
UniqueFd receive_fd(int channel);

}  // namespace vigil::init
