#include "filters/seccomp_probe.h"

#include <linux/filter.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fcntl.h>

#include "filters/kernel_seccomp.h"
#include "filters/seccomp_notify.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil {
namespace {

// Bits the child reports through its exit status.
constexpr int kNotif = 1, kContinue = 2, kKillable = 4, kSync = 8, kAddfd = 16;

// A filter that sends getppid to the listener, built by libseccomp and exported, so the
// raw seccomp() call below can add flags libseccomp 2.5.4 does not know.
bool load_notify_filter(unsigned long flags, int* listener) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (ctx == nullptr) return false;
  bool ok = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(getppid), 0) == 0;
  UniqueFd mem(::memfd_create("vigil-probe-bpf", MFD_CLOEXEC));
  ok = ok && mem && seccomp_export_bpf(ctx, mem.get()) == 0;
  seccomp_release(ctx);
  if (!ok) return false;
  const off_t size = ::lseek(mem.get(), 0, SEEK_END);
  if (size <= 0 || size % static_cast<off_t>(sizeof(sock_filter)) != 0) return false;
  static sock_filter insns[4096];
  if (static_cast<size_t>(size) > sizeof insns) return false;
  if (::pread(mem.get(), insns, static_cast<size_t>(size), 0) != size) return false;
  sock_fprog prog{static_cast<unsigned short>(static_cast<size_t>(size) / sizeof(sock_filter)),
                  insns};
  const long fd = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                            SECCOMP_FILTER_FLAG_NEW_LISTENER | flags, &prog);
  if (fd < 0) return false;
  *listener = static_cast<int>(fd);
  return true;
}

[[noreturn]] void probe_child() {
  int bits = 0;
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ::_exit(0);
  int listener = -1;
  // WAIT_KILLABLE_RECV is tried in a grandchild, since a second filter would stack.
  const pid_t g = ::fork();
  if (g == 0)
    ::_exit(load_notify_filter(SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &listener) ? 0 : 1);
  int gs = 0;
  if (g > 0 && ::waitpid(g, &gs, 0) == g && WIFEXITED(gs) && WEXITSTATUS(gs) == 0)
    bits |= kKillable;
  if (!load_notify_filter(0, &listener)) ::_exit(bits);
  bits |= kNotif;
  auto adopted = NotifyListener::adopt(UniqueFd(listener));
  if (!adopted.ok()) ::_exit(bits);
  NotifyListener& lfd = *adopted;
  if (lfd.set_sync_wake_up()) bits |= kSync;
  // Round trip: a thread-free way is a grandchild that inherits the filter and calls
  // getppid; we answer CONTINUE and check it returned normally.
  const pid_t t = ::fork();
  if (t == 0) ::_exit(::getppid() > 0 ? 0 : 1);
  if (t < 0) ::_exit(bits);
  Notification req;
  if (lfd.receive(&req) && lfd.answer_continue(req.id)) {
    int ts = 0;
    if (::waitpid(t, &ts, 0) == t && WIFEXITED(ts) && WEXITSTATUS(ts) == 0) bits |= kContinue;
  }
  // The same call answered with an fd installed in the caller (what the gatekeeper
  // needs to perform opens): the grandchild checks getppid returned an open fd.
  const pid_t u = ::fork();
  if (u == 0) {
    const int got = static_cast<int>(::getppid());
    ::_exit(got > 2 && ::fcntl(got, F_GETFD) >= 0 ? 0 : 1);
  }
  if (u < 0) ::_exit(bits);
  UniqueFd null(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (null && lfd.receive(&req)) {
    const long installed = lfd.answer_with_fd(req.id, null.get(), false);
    if (installed < 0) lfd.answer(req.id, 0, static_cast<int>(-installed));
    int us = 0;
    if (::waitpid(u, &us, 0) == u && WIFEXITED(us) && WEXITSTATUS(us) == 0) bits |= kAddfd;
  }
  ::_exit(bits);
}

}  // namespace

SeccompFeatures probe_seccomp() {
  SeccompFeatures f;
  const pid_t pid = ::fork();
  if (pid < 0) {
    f.error = std::string("fork: ") + std::strerror(errno);
    return f;
  }
  if (pid == 0) probe_child();
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
    f.error = "the probe child did not exit normally";
    return f;
  }
  const int bits = WEXITSTATUS(status);
  f.user_notif = bits & kNotif;
  f.notif_continue = bits & kContinue;
  f.wait_killable_recv = bits & kKillable;
  f.sync_wake_up = bits & kSync;
  f.addfd_send = bits & kAddfd;
  return f;
}

}  // namespace vigil
