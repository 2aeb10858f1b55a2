// Opening a file vigil only reads (a settings file, a session log) so that what is
// checked is what is read: one open(2), then every check on the fd. O_NONBLOCK: a FIFO
// or a device planted at the path cannot hang the open; fstat then refuses anything but
// a regular file before a single byte is read.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil {

// Opens `path` read-only, non-blocking; error (naming `what` and the path) unless it is a
// regular file.
Result<UniqueFd> open_regular_file(const std::string& path, std::string_view what);

// Reads `fd` to its end, at most `max` bytes (one more is read, so that a caller can tell
// "exactly max" from "more than max").
Result<std::string> read_fd_text(int fd, std::size_t max, std::string_view what);

// Where the kernel says an open fd's file is now (readlink of /proc/self/fd/N): the path
// it was really opened at, whatever symlinks the spelling went through. "" when unknown.
std::string fd_path(int fd);

}  // namespace vigil
