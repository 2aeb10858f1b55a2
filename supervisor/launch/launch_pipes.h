// The descriptors of a launch: the pipes bwrap and vigil-init write to (each made with the
// flags its reader needs), the sealed memfd that carries bwrap's argv, and the reader the
// wait loop (launch_wait.h) drains them with.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "supervisor/core/base/pipe.h"
#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil {

// The status pipe is made first, because its fd number is part of the argv. Its read end
// is non-blocking: we drain it after bwrap exits.
Result<Pipe> make_status_pipe();

// The observer's event lines: vigil-init writes, we read (untrusted text). The read end
// is non-blocking, the pipe large.
Result<Pipe> make_event_pipe();

// vigil-init's seccomp program (filters/sandbox_program.h): we write it once, after
// bwrap has started; the read end goes into the sandbox (LaunchIo::pass_fds).
Result<Pipe> make_program_pipe();

// A pipe for one of the command's output streams: the read end is ours (non-blocking),
// the write end becomes the command's fd 1 or 2.
Result<Pipe> make_output_pipe();

// A memfd holding `data`, sealed (nothing, not even a process sharing the fd, can change
// it after we wrote it) and positioned at 0; `what` names it in errors and in /proc.
Result<UniqueFd> sealed_memfd(const std::string& data, const char* what);

// One pipe the supervisor reads while the command runs. Reads are non-blocking until
// the command has exited, then blocking to the end (everything that could write is gone:
// the sandbox's PID namespace dies with its init).
struct PipeReader {
  UniqueFd fd;
  std::string buf;
  bool skipping = false;  // inside an overlong line, until its newline
  bool open() const { return static_cast<bool>(fd); }
  // Appends what is there to `buf`; closes at EOF or on an error.
  void read_some();
  void set_blocking();
  // Hands each complete line to f. The events pipe carries untrusted text: a line longer
  // than `max_line` is handed over cut at that length (the consumer's parser refuses it
  // as malformed, so it is counted) and the rest of it, up to its newline, is skipped,
  // so the buffer stays bounded whatever the sandbox writes.
  template <class F>
  void take_lines(F&& f, size_t max_line) {
    size_t start = 0, nl;
    while ((nl = buf.find('\n', start)) != std::string::npos) {
      if (!skipping) f(std::string_view(buf).substr(start, nl - start));
      skipping = false;
      start = nl + 1;
    }
    buf.erase(0, start);
    if (buf.size() > max_line) {
      if (!skipping) f(std::string_view(buf).substr(0, max_line + 1));
      skipping = true;
      buf.clear();
    }
  }
};

}  // namespace vigil
