// The seam between vigil and the kernel's seccomp user-notification interface: the only
// code that issues SECCOMP_IOCTL_* (and sizes its buffers with SECCOMP_GET_NOTIF_SIZES,
// so a kernel whose structs grew never writes past ours). Everything that decides what to
// do with a notification takes a CallerMemory, which tests fake.
#pragma once

#include <cerrno>

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil {

// One trapped call, copied out of the kernel's struct seccomp_notif.
struct Notification {
  std::uint64_t id = 0;
  pid_t pid = 0;  // in the listener's PID namespace
  int nr = -1;
  std::uint32_t arch = 0;
  std::uint64_t args[6] = {};
};

// What deciding a call needs from the kernel: the caller's memory, and whether the call
// is still waiting (an answer to a gone call is lost; what was read from its memory
// belongs to nobody once the id is no longer valid).
class CallerMemory {
 public:
  virtual ~CallerMemory() = default;
  virtual bool id_valid(std::uint64_t id) = 0;
  // Reads up to `len` bytes at `addr` in `pid`: the count read, or -1 with errno set
  // (EFAULT: not mapped; EPERM/EACCES: the process is not dumpable; ESRCH: gone).
  virtual long read(pid_t pid, std::uint64_t addr, void* buf, std::size_t len) = 0;
};

// What the notify loop (observer/notify_loop.h) needs of a listener: the kernel's
// (NotifyListener below), or a fake that hands the loop notifications and records its
// answers, so the loop itself has unit tests (tests/unit/observer/notify_loop_test.cc).
// One virtual call per answer beside the ioctl it stands for (measured in
// docs/performance/notify-seam.md: within the bench's noise).
class NotifyChannel : public CallerMemory {
 public:
  // What poll() waits on.
  virtual int fd() const = 0;
  // Next notification. False when none could be taken (raced away: the caller was killed
  // between poll and receive, or the listener is gone).
  virtual bool receive(Notification* out) = 0;
  // Lets the call run in the kernel as the caller made it (only where nothing it reads
  // from memory can change what it does: execs, fd-based calls).
  virtual bool answer_continue(std::uint64_t id) = 0;
  // The call returns `value`, or fails with `error` (a positive errno) when not 0.
  virtual bool answer(std::uint64_t id, std::int64_t value, int error) = 0;
  // Installs `fd` (ours) in the caller as the call's result (SECCOMP_ADDFD_FLAG_SEND,
  // Linux 5.14): the caller's new fd number, or -errno (the call is then still waiting).
  virtual long answer_with_fd(std::uint64_t id, int fd, bool cloexec) = 0;
  // Installs `fd` in the caller without answering (SECCOMP_IOCTL_NOTIF_ADDFD, Linux 5.9):
  // the caller's new fd number, or -errno. The caller is answered with answer().
  virtual long install_fd(std::uint64_t id, int fd, bool cloexec) = 0;
  // SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (Linux 6.6); false where the kernel lacks it.
  virtual bool set_sync_wake_up() = 0;
  // Installs `fd` in the caller AT `target`, replacing what the caller had there
  // (SECCOMP_ADDFD_FLAG_SETFD, Linux 5.9; the connect broker: observer/inet_broker.h),
  // without answering: `target`, or -errno. A channel without it says ENOSYS.
  virtual long install_fd_at(std::uint64_t id, int fd, int target, bool cloexec) {
    (void)id, (void)fd, (void)target, (void)cloexec;
    return -ENOSYS;
  }
};

class NotifyListener final : public NotifyChannel {
 public:
  // Takes the listener fd from SECCOMP_FILTER_FLAG_NEW_LISTENER.
  static Result<NotifyListener> adopt(UniqueFd listener);
  int fd() const override { return fd_.get(); }

  bool receive(Notification* out) override;
  bool answer_continue(std::uint64_t id) override;
  bool answer(std::uint64_t id, std::int64_t value, int error) override;
  long answer_with_fd(std::uint64_t id, int fd, bool cloexec) override;
  long install_fd(std::uint64_t id, int fd, bool cloexec) override;
  long install_fd_at(std::uint64_t id, int fd, int target, bool cloexec) override;
  bool set_sync_wake_up() override;

  bool id_valid(std::uint64_t id) override;
  long read(pid_t pid, std::uint64_t addr, void* buf, std::size_t len) override;

 private:
  NotifyListener() = default;
  UniqueFd fd_;
  std::vector<std::uint64_t> req_, resp_;  // kernel-sized, 8-byte aligned
};

}  // namespace vigil
