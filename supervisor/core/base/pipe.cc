#include "supervisor/core/base/pipe.h"

#include <unistd.h>

namespace vigil {

Result<Pipe> make_pipe(int flags) {
  int fds[2];
#if defined(__APPLE__)
  if (::pipe(fds) != 0) return system_error("pipe");
  Pipe p{UniqueFd(fds[0]), UniqueFd(fds[1])};
  for (const int fd : {fds[0], fds[1]}) {
    if ((flags & O_CLOEXEC) != 0 && ::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0)
      return system_error("fcntl(FD_CLOEXEC)");
    if ((flags & O_NONBLOCK) != 0 && ::fcntl(fd, F_SETFL, O_NONBLOCK) != 0)
      return system_error("fcntl(O_NONBLOCK)");
  }
  return p;
#else
  if (::pipe2(fds, flags) != 0) return system_error("pipe2");
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
#endif
}

}  // namespace vigil
