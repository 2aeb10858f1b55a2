#include "observer/proc_dir.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>

#include "supervisor/core/base/unique_fd.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
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

std::string proc_dir(pid_t pid) {
  if (!g_outer_proc) return "/proc/" + std::to_string(pid);
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
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
