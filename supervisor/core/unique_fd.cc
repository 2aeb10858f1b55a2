#include "supervisor/core/unique_fd.h"

#include <linux/close_range.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace vigil {

void UniqueFd::reset(int fd) {
  const int old = std::exchange(fd_, fd);
  // Linux always releases the descriptor, even when close() reports EINTR,
  // so retrying would risk closing an fd another thread just received.
  if (old >= 0) ::close(old);
}

void close_fds_from(int first) {
  // close_range(2) (Linux 5.9) closes the whole range in one call, fds we do not know of
  // included; no loop over /proc/self/fd that could miss one.
  ::syscall(SYS_close_range, static_cast<unsigned>(first), ~0U, 0U);
}

void close_fds_from_except(int first, int keep) {
  if (keep < first) return close_fds_from(first);
  if (keep > first)
    ::syscall(SYS_close_range, static_cast<unsigned>(first), static_cast<unsigned>(keep - 1), 0U);
  ::syscall(SYS_close_range, static_cast<unsigned>(keep + 1), ~0U, 0U);
}

}  // namespace vigil
