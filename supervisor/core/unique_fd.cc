#include "supervisor/core/unique_fd.h"

#include <unistd.h>

namespace vigil {

void UniqueFd::reset(int fd) {
  const int old = std::exchange(fd_, fd);
  // Linux always releases the descriptor, even when close() reports EINTR,
  // so retrying would risk closing an fd another thread just received.
  if (old >= 0) ::close(old);
}

}  // namespace vigil
