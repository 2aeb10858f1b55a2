// The pieces of the tunnel's zero-copy relay (Linux): a pipe that splice(2) moves bytes
// through (socket -> pipe -> socket, never through user space), the server's pool of
// empty pipes, and one non-blocking splice call with its outcome as a value.
//
// A direction of a tunnel holds a pipe only while bytes are in it: it takes one when its
// source has data and gives it back once drained. An idle tunnel holds no pipe (two
// descriptors per connection, as with the buffered relay), a blocked one holds one (at most
// a pipe's capacity in flight per direction: back-pressure), and while connections are open
// their tunnels reuse the same few pipes instead of a pipe2 and two closes each (when the
// last connection ends, the pool is trimmed to the one pipe the server keeps while it
// lives). Used only on the server's io_context thread.
#pragma once

#include <cstddef>
#include <vector>

#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil::proxy {

// Whether this build relays tunnels with splice(2) (Linux only).
constexpr bool splice_available() {
#if defined(__linux__)
  return true;
#else
  return false;
#endif
}

struct SplicePipe {
  UniqueFd read;
  UniqueFd write;
  explicit operator bool() const { return read.get() >= 0; }
};

class PipePool {
 public:
  static constexpr std::size_t kKeep = 16;
  // An empty pipe: a kept one, else a new one (O_CLOEXEC, O_NONBLOCK both ends). The
  // error names the cause (EMFILE: the descriptor limit).
  Result<SplicePipe> take();
  // Keeps an EMPTY pipe for the next taker (bounded; beyond kKeep it is closed). A pipe
  // that still holds bytes must not be given back: it is closed by its owner.
  void give(SplicePipe pipe);
  // Closes every kept pipe beyond `keep` (the server went idle), or all (it stops).
  void trim(std::size_t keep);
  void clear() { trim(0); }
  std::size_t kept() const { return free_.size(); }

 private:
  std::vector<SplicePipe> free_;
};

// One splice(2) call, non-blocking.
struct SpliceStep {
  enum class Kind { kMoved, kWouldBlock, kEnd, kError };
  Kind kind = Kind::kError;
  std::size_t bytes = 0;  // kMoved
  int error = 0;          // kError: errno
};

// Moves at most `max` bytes from `from` to `to` (one of them a pipe). kEnd: `from` is a
// socket at end of stream.
SpliceStep splice_step(int from, int to, std::size_t max);

}  // namespace vigil::proxy
