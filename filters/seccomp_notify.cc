#include "filters/seccomp_notify.h"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "filters/kernel_seccomp.h"

namespace vigil {

Result<NotifyListener> NotifyListener::adopt(UniqueFd listener) {
  if (!listener) return make_error(Errc::kSystem, "seccomp listener: not an open fd");
  seccomp_notif_sizes sizes{};
  if (::syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) != 0) {
    return make_error(Errc::kUnsupported,
                      std::string("SECCOMP_GET_NOTIF_SIZES: ") + std::strerror(errno));
  }
  NotifyListener l;
  l.fd_ = std::move(listener);
  // The kernel's structs may be larger than the ones we were compiled with (it fills
  // what it has); never smaller than ours, since we read our fields.
  const std::size_t req = std::max<std::size_t>(sizes.seccomp_notif, sizeof(seccomp_notif));
  const std::size_t resp =
      std::max<std::size_t>(sizes.seccomp_notif_resp, sizeof(seccomp_notif_resp));
  l.req_.assign((req + 7) / 8, 0);
  l.resp_.assign((resp + 7) / 8, 0);
  return l;
}

bool NotifyListener::receive(Notification* out) {
  std::fill(req_.begin(), req_.end(), 0);  // the kernel insists on a zeroed buffer
  if (::ioctl(fd_.get(), SECCOMP_IOCTL_NOTIF_RECV, req_.data()) != 0) return false;
  const auto* n = reinterpret_cast<const seccomp_notif*>(req_.data());
  out->id = n->id;
  out->pid = static_cast<pid_t>(n->pid);
  out->nr = n->data.nr;
  out->arch = n->data.arch;
  std::memcpy(out->args, n->data.args, sizeof out->args);
  return true;
}

namespace {
seccomp_notif_resp* fresh(std::vector<std::uint64_t>& buf, std::uint64_t id) {
  std::fill(buf.begin(), buf.end(), 0);
  auto* r = reinterpret_cast<seccomp_notif_resp*>(buf.data());
  r->id = id;
  return r;
}
}  // namespace

bool NotifyListener::answer_continue(std::uint64_t id) {
  seccomp_notif_resp* r = fresh(resp_, id);
  r->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  return ::ioctl(fd_.get(), SECCOMP_IOCTL_NOTIF_SEND, r) == 0;
}

bool NotifyListener::answer(std::uint64_t id, std::int64_t value, int error) {
  seccomp_notif_resp* r = fresh(resp_, id);
  r->val = error != 0 ? -1 : value;
  r->error = error != 0 ? -error : 0;
  return ::ioctl(fd_.get(), SECCOMP_IOCTL_NOTIF_SEND, r) == 0;
}

long NotifyListener::answer_with_fd(std::uint64_t id, int fd, bool cloexec) {
  seccomp_notif_addfd add{};
  add.id = id;
  add.flags = SECCOMP_ADDFD_FLAG_SEND;
  add.srcfd = static_cast<__u32>(fd);
  add.newfd_flags = cloexec ? O_CLOEXEC : 0;
  const int got = ::ioctl(fd_.get(), SECCOMP_IOCTL_NOTIF_ADDFD, &add);
  return got >= 0 ? got : -errno;
}

long NotifyListener::install_fd(std::uint64_t id, int fd, bool cloexec) {
  seccomp_notif_addfd add{};
  add.id = id;
  add.srcfd = static_cast<__u32>(fd);
  add.newfd_flags = cloexec ? O_CLOEXEC : 0;
  const int got = ::ioctl(fd_.get(), SECCOMP_IOCTL_NOTIF_ADDFD, &add);
  return got >= 0 ? got : -errno;
}

long NotifyListener::install_fd_at(std::uint64_t id, int fd, int target, bool cloexec) {
  seccomp_notif_addfd add{};
  add.id = id;
  add.flags = SECCOMP_ADDFD_FLAG_SETFD;
  add.srcfd = static_cast<__u32>(fd);
  add.newfd = static_cast<__u32>(target);
  add.newfd_flags = cloexec ? O_CLOEXEC : 0;
  const int got = ::ioctl(fd_.get(), SECCOMP_IOCTL_NOTIF_ADDFD, &add);
  return got >= 0 ? got : -errno;
}

bool NotifyListener::set_sync_wake_up() {
  __u64 flags = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;
  return ::ioctl(fd_.get(), SECCOMP_IOCTL_NOTIF_SET_FLAGS, flags) == 0;
}

bool NotifyListener::id_valid(std::uint64_t id) {
  return ::ioctl(fd_.get(), SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

long NotifyListener::read(pid_t pid, std::uint64_t addr, void* buf, std::size_t len) {
  iovec local{buf, len};
  iovec remote{reinterpret_cast<void*>(addr), len};
  return ::process_vm_readv(pid, &local, 1, &remote, 1, 0);
}

}  // namespace vigil
