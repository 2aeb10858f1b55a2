#include "observer/proc_dir.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>

#include "supervisor/core/base/unique_fd.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL  // include/uapi/linux/pidfd.h, Linux 6.9
#endif

namespace vigil::init {
namespace {
bool g_outer_proc = false;
}  // namespace

void set_outer_proc(bool on) { g_outer_proc = on; }
bool outer_proc() { return g_outer_proc; }

long pid_from_fdinfo(const std::string& fdinfo) {
  const std::string key = "\nPid:";
  const std::string text = "\n" + fdinfo;
  const auto at = text.find(key);
  if (at == std::string::npos) return -1;
  std::size_t i = at + key.size();
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
  const std::size_t start = i;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  if (i == start || i - start > 9 || (i < text.size() && text[i] != '\n')) return -1;
  const long v = std::strtol(text.c_str() + start, nullptr, 10);
  return v > 0 ? v : -1;  // 0: not in that namespace; -1: gone
}

UniqueFd task_pidfd(pid_t tid) {
  // Whether the kernel knows PIDFD_THREAD, learnt from its first answer (read by the loop
  // and the threads that perform waiting calls: atomic). Before 6.9 every fetch would
  // otherwise pay a pidfd_open that fails.
  static std::atomic<bool> no_thread_flag{false};
  if (!no_thread_flag.load(std::memory_order_relaxed)) {
    UniqueFd fd(static_cast<int>(::syscall(SYS_pidfd_open, tid, PIDFD_THREAD)));
    if (fd || errno != EINVAL || tid <= 0) return fd;
    // EINVAL for a positive tid: a kernel before PIDFD_THREAD (on one with it, the flag
    // is the only one and any live or dead tid gets a pidfd or ESRCH).
    no_thread_flag.store(true, std::memory_order_relaxed);
  }
  // Only a group leader has a pidfd there.
  return UniqueFd(static_cast<int>(::syscall(SYS_pidfd_open, tid, 0)));
}

std::string proc_dir(pid_t pid) {
  if (!g_outer_proc) return "/proc/" + std::to_string(pid);
  UniqueFd pidfd = task_pidfd(pid);
  if (!pidfd) return "/proc/0/gone";
  const std::string info = "/proc/self/fdinfo/" + std::to_string(pidfd.get());
  UniqueFd fd(::open(info.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return "/proc/0/gone";
  char buf[1024];
  const ssize_t n = ::read(fd.get(), buf, sizeof buf - 1);
  if (n <= 0) return "/proc/0/gone";
  const long outer = pid_from_fdinfo(std::string(buf, static_cast<std::size_t>(n)));
  return outer > 0 ? "/proc/" + std::to_string(outer) : "/proc/0/gone";
}

}  // namespace vigil::init
