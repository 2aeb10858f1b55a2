// The one loop that writes a whole buffer to a descriptor, retrying short writes and
// EINTR, in three shapes: write_all() for vigil's own files (a log, a memfd, a pipe it
// made), whose failure is an error value naming what was being written; pwrite_all() at
// an offset; write_all_to()
// for output whose reader may go away or stop reading (the command's output, a client's
// socket, a terminal), which waits on a full non-blocking fd and never raises SIGPIPE.
#pragma once

#include <cstdint>
#include <string_view>

#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil {

// Errc::kSystem naming `what` ("cannot write <what>: <errno text>") when a write fails or
// writes nothing.
Result<void> write_all(int fd, std::string_view data, std::string_view what);

// write_all() at `offset` (pwrite: the file position stays). 0, or the errno of the
// failure (EIO for a write that wrote nothing), for a caller that keeps it (the content
// store's packs, written by vigil-init's observer).
int pwrite_all(int fd, std::string_view data, std::uint64_t offset);

// Writes all of `bytes` to `fd` (waiting while a non-blocking fd is full). False when the
// reader is gone (EPIPE) or the fd is unusable: the default on_output. Never raises
// SIGPIPE, whatever the process's disposition. With `stop_fd` (an eventfd or pipe), it
// never blocks for good: it waits for room or for `stop_fd` to become readable, and then
// gives up (false).
bool write_all_to(int fd, std::string_view bytes, int stop_fd = -1);

// A file description of our own for what `fd` writes to, reopened non-blocking through
// /proc/self/fd (the caller's description, shared with its shell, keeps its flags). With
// it, write_all_to() writes whole buffers and waits for room in poll, where the stop fd
// reaches it, instead of slicing them into PIPE_BUF writes that each poll first: a
// command's megabytes of output cost one write per chunk, not one per 4 KiB. Empty where
// none is needed (a regular file, or `fd` already non-blocking), none can be had (a
// socket, a FIFO without a reader, no /proc), or reopening could act on the device (any
// but a terminal or /dev/null): write_all_to() then slices as before.
UniqueFd nonblocking_twin(int fd);

}  // namespace vigil
