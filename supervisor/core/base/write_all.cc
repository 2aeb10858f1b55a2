#include "supervisor/core/base/write_all.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <optional>
#include <string>

namespace vigil {
namespace {

struct LoopOptions {
  // EAGAIN on a non-blocking fd: wait for room (poll) instead of failing.
  bool wait_when_full = false;
  // Wait for room before each write, and write at most PIPE_BUF (what room guarantees),
  // giving up when `stop_fd` becomes readable first.
  bool bounded = false;
  int stop_fd = -1;
  // pwrite at this offset (the file position untouched) instead of write.
  std::optional<std::uint64_t> at;
};

// What ended the loop: 0 all written; kWroteNothing a write returned 0; else the errno
// (ECANCELED: the stop_fd fired with no room).
constexpr int kWroteNothing = -1;

// The loop itself: every whole-buffer write in vigil goes through here.
int write_loop(int fd, std::string_view bytes, LoopOptions o) {
  while (!bytes.empty()) {
    if (o.bounded) {
      pollfd p[2] = {{fd, POLLOUT, 0}, {o.stop_fd, POLLIN, 0}};
      if (::poll(p, 2, -1) < 0 && errno != EINTR) return errno;
      if (p[0].revents == 0) {
        if (p[1].revents == 0) continue;
        return ECANCELED;  // no room, and the command was signalled: nobody reads this
      }
    }
    const std::size_t step =
        o.bounded ? std::min<std::size_t>(bytes.size(), PIPE_BUF) : bytes.size();
    const ssize_t n = o.at ? ::pwrite(fd, bytes.data(), step, static_cast<off_t>(*o.at))
                           : ::write(fd, bytes.data(), step);
    if (n > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
      if (o.at) *o.at += static_cast<std::uint64_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN && o.wait_when_full) {
      pollfd p[2] = {{fd, POLLOUT, 0}, {o.stop_fd, POLLIN, 0}};  // a non-blocking fd: wait for room
      if (::poll(p, o.stop_fd >= 0 ? 2 : 1, -1) < 0 && errno != EINTR) return errno;
      // No room, and the command was signalled: nobody reads this (as the bounded wait).
      if (p[0].revents == 0 && o.stop_fd >= 0 && p[1].revents != 0) return ECANCELED;
    } else {
      return n == 0 ? kWroteNothing : errno;
    }
  }
  return 0;
}

}  // namespace

Result<void> write_all(int fd, std::string_view data, std::string_view what) {
  const int end = write_loop(fd, data, LoopOptions{});
  if (end == 0) return {};
  if (end == kWroteNothing) {
    return make_error(Errc::kSystem, "cannot write " + std::string(what) + ": write returned 0");
  }
  return system_error("cannot write " + std::string(what), end);
}

int pwrite_all(int fd, std::string_view data, std::uint64_t offset) {
  LoopOptions o;
  o.at = offset;
  const int end = write_loop(fd, data, o);
  return end == kWroteNothing ? EIO : end;
}

bool write_all_to(int fd, std::string_view bytes, int stop_fd) {
  // A reader that went away must cost an EPIPE here, never the process: an embedder may
  // keep SIGPIPE's default. SIGPIPE for a write is sent to the writing thread, so it is
  // blocked in this thread for the write, and one the write raised is taken back before
  // the old mask returns (unless one was already pending: that one is not ours).
  sigset_t pipe_only, old;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
  sigset_t pending;
  sigpending(&pending);
  const bool already_pending = sigismember(&pending, SIGPIPE) == 1;
  // With a stop_fd, a write never blocks for good: it waits for room (POLLOUT, or the
  // stop) and writes at most what room guarantees (PIPE_BUF) to anything that can fill
  // up; a regular file takes it all.
  struct stat st {};
  LoopOptions o;
  o.wait_when_full = true;
  o.stop_fd = stop_fd;
  // (A non-blocking fd never waits in write: EAGAIN sends it to the poll.)
  o.bounded = stop_fd >= 0 && ::fstat(fd, &st) == 0 && !S_ISREG(st.st_mode) &&
              (::fcntl(fd, F_GETFL) & O_NONBLOCK) == 0;
  const int end = write_loop(fd, bytes, o);
  if (end == EPIPE && !already_pending) {
#if defined(__APPLE__)
    // No sigtimedwait: sigwait returns at once for a pending signal, and only one is.
    sigset_t now;
    sigpending(&now);
    int taken = 0;
    if (sigismember(&now, SIGPIPE) == 1) (void)sigwait(&pipe_only, &taken);
#else
    const timespec now{0, 0};
    while (::sigtimedwait(&pipe_only, nullptr, &now) < 0 && errno == EINTR) {
    }
#endif
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  // EPIPE (the reader is gone), EBADF, ...
  return end == 0;
}

UniqueFd nonblocking_twin(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return {};
  // Pipes, terminals and /dev/null only: opening some other device again can act on it
  // (a tape rewinds at close, a serial line drops its modem lines).
  struct stat null {};
  const bool null_device = S_ISCHR(st.st_mode) && ::stat("/dev/null", &null) == 0 &&
                           S_ISCHR(null.st_mode) && null.st_rdev == st.st_rdev;
  if (!S_ISFIFO(st.st_mode) && !(S_ISCHR(st.st_mode) && (::isatty(fd) == 1 || null_device)))
    return {};
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || (flags & O_NONBLOCK) != 0 || (flags & O_ACCMODE) == O_RDONLY) return {};
  // O_NOCTTY: a terminal reopened here never becomes vigil's controlling terminal.
  const std::string self = "/proc/self/fd/" + std::to_string(fd);
  UniqueFd twin(::open(self.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!twin) return {};
  // The same file, or nothing: /proc could name another (a mount over it, a race).
  struct stat tw {};
  if (::fstat(twin.get(), &tw) != 0 || tw.st_dev != st.st_dev || tw.st_ino != st.st_ino ||
      tw.st_rdev != st.st_rdev)
    return {};
  return twin;
}

}  // namespace vigil
