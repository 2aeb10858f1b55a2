// The pipe pool and one splice(2) call (splice_pipe.h).
#include "proxy/splice_pipe.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace vigil::proxy {

Result<SplicePipe> PipePool::take() {
  if (!free_.empty()) {
    SplicePipe p = std::move(free_.back());
    free_.pop_back();
    return p;
  }
#if defined(__linux__)
  int fds[2] = {-1, -1};
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    const int err = errno;
    return make_error(Errc::kInternal,
                      std::string("the tunnel's splice pipe could not be made: ") +
                          std::strerror(err) +
                          (err == EMFILE || err == ENFILE
                               ? " (raise the descriptor limit, ulimit -n, or lower "
                                 "--max-connections)"
                               : ""));
  }
  SplicePipe p;
  p.read = UniqueFd(fds[0]);
  p.write = UniqueFd(fds[1]);
  return p;
#else
  return make_error(Errc::kUnsupported, "splice(2) relays exist on Linux only");
#endif
}

void PipePool::give(SplicePipe pipe) {
  if (pipe && free_.size() < kKeep) free_.push_back(std::move(pipe));
}

void PipePool::trim(std::size_t keep) {
  if (free_.size() > keep) free_.resize(keep);
  if (keep == 0) free_.shrink_to_fit();
}

SpliceStep splice_step(int from, int to, std::size_t max) {
  SpliceStep s;
#if defined(__linux__)
  while (true) {
    const ssize_t n = ::splice(from, nullptr, to, nullptr, max, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (n > 0) {
      s.kind = SpliceStep::Kind::kMoved;
      s.bytes = static_cast<std::size_t>(n);
    } else if (n == 0) {
      s.kind = SpliceStep::Kind::kEnd;
    } else if (errno == EINTR) {
      continue;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      s.kind = SpliceStep::Kind::kWouldBlock;
    } else {
      s.kind = SpliceStep::Kind::kError;
      s.error = errno;
    }
    return s;
  }
#else
  (void)from;
  (void)to;
  (void)max;
  s.error = ENOSYS;
  return s;
#endif
}

}  // namespace vigil::proxy
