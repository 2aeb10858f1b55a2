// The one loop that writes a whole buffer to a descriptor (a file, a memfd), retrying
// short writes and EINTR. Pipes and terminals the command's output goes to have their own,
// write_all_to() in supervisor/session/session_runner.h (it also waits on a full non-blocking fd
// and never raises SIGPIPE).
#pragma once

#include <string_view>

#include "supervisor/core/base/result.h"

namespace vigil {

// Errc::kSystem naming `what` ("cannot write <what>: <errno text>") when a write fails or
// writes nothing.
Result<void> write_all(int fd, std::string_view data, std::string_view what);

}  // namespace vigil
