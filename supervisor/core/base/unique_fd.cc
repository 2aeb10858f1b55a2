#include "supervisor/core/base/unique_fd.h"

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

void close_fds_from_except(int first, std::span<const int> keep) {
  if (keep.size() > kMaxKept) return close_fds_from(first);
  // The kept fds, ascending (insertion sort on the stack: no allocation).
  int kept[kMaxKept];
  std::size_t n = 0;
  for (int fd : keep) {
    if (fd < first) continue;
    std::size_t i = n++;
    for (; i > 0 && kept[i - 1] > fd; --i) kept[i] = kept[i - 1];
    kept[i] = fd;
  }
  int from = first;
  for (std::size_t i = 0; i < n; ++i) {
    if (kept[i] > from) {
      ::syscall(SYS_close_range, static_cast<unsigned>(from), static_cast<unsigned>(kept[i] - 1),
                0U);
    }
    if (kept[i] + 1 > from) from = kept[i] + 1;
  }
  ::syscall(SYS_close_range, static_cast<unsigned>(from), ~0U, 0U);
}

}  // namespace vigil
