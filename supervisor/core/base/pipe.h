// The one pipe type: both ends owned (UniqueFd), close-on-exec unless the caller asks
// otherwise, so that no pipe vigil makes leaks into a command it starts. A pipe that
// means something more (bwrap's status pipe, the observer's event pipe) is made by a
// function of its own that sets its flags, and is still a Pipe.
#pragma once

#include <fcntl.h>

#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil {

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

// pipe2(flags) (pipe() and fcntl() where there is no pipe2, as on macOS). `flags`:
// O_CLOEXEC and/or O_NONBLOCK, for both ends; set one end's flags afterwards with fcntl.
// Errc::kSystem on failure.
Result<Pipe> make_pipe(int flags = O_CLOEXEC);

}  // namespace vigil
