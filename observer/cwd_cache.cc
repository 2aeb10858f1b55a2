#include "observer/cwd_cache.h"
#include "observer/proc_dir.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace vigil::init {

namespace {

std::int64_t monotonic_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// Whether the task behind `proc_dir` (a kept /proc/TID) is past its call number `nr`,
// which it entered before the loop answered it: it is gone (its /proc entry is bound to
// it, so a reused number does not count), a zombie, or now in another call or in none
// ("-1": blocked in user space) by its /proc/TID/syscall. A task's calls come one after
// another, so any other number there means the one answered has returned. "running" (on a
// CPU, maybe in that call still) or an unreadable file: not known, so not past.
bool past_call(int proc_dir, int nr) {
  char buf[512];
  auto read_all = [&](const char* name) -> ssize_t {
    UniqueFd f(::openat(proc_dir, name, O_RDONLY | O_CLOEXEC));
    if (!f) return errno == EACCES || errno == EPERM ? -2 : -1;
    const ssize_t n = ::read(f.get(), buf, sizeof buf - 1);
    if (n >= 0) buf[n] = '\0';
    return n;
  };
  const ssize_t st = read_all("stat");
  if (st == -1 || st == 0) return true;
  if (st > 0) {
    // The state follows the parenthesised command name (which may hold ')': the last ends it).
    const char* close_paren = std::strrchr(buf, ')');
    if (close_paren != nullptr && close_paren[1] == ' ' &&
        (close_paren[2] == 'Z' || close_paren[2] == 'X' || close_paren[2] == 'x'))
      return true;
  }
  if (read_all("syscall") <= 0) return false;
  char* end = nullptr;
  const long now = std::strtol(buf, &end, 10);
  if (end == buf) return false;  // "running"
  return now != nr;
}
}  // namespace

void CwdCache::chdir_begins(pid_t tid, int nr) {
  // Kept so that a pending task that ends is seen even if its number is reused.
  Pending p{UniqueFd(::open(init::proc_dir(tid).c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)), nr};
  // Unopenable because it is gone (ENOENT): its call cannot run any more, and the next
  // recheck drops it. Unopenable otherwise: only its next call takes it out.
  p.gone = !p.proc_dir && errno == ENOENT;
  if (pending_.empty()) checked_ms_ = monotonic_ms();
  pending_[tid] = std::move(p);
}

void CwdCache::saw_call(pid_t tid) {
  retired_.clear();  // the last call is done with every fd get() gave it
  if (pending_.empty()) return;
  pending_.erase(tid);  // its chdir has returned: it is making another call
  if (!pending_.empty() && monotonic_ms() - checked_ms_ >= kRecheckMs) recheck_pending();
  settle_if_done();
}

void CwdCache::recheck_pending() {
  checked_ms_ = monotonic_ms();
  for (auto it = pending_.begin(); it != pending_.end();) {
    const Pending& p = it->second;
    if (p.gone || (p.proc_dir && past_call(p.proc_dir.get(), p.nr)))
      it = pending_.erase(it);
    else
      ++it;
  }
}

void CwdCache::settle_if_done() {
  if (!pending_.empty()) return;
  // Every chdir-family call answered has run: whatever was kept meanwhile may name a
  // sharer's old cwd, and trusted entries are never checked again.
  for (auto& [pid, entry] : entries_) retired_.push_back(std::move(entry.cwd));
  entries_.clear();
}

int CwdCache::identify(int dir, const char* name, int flags, Identity* out) {
  struct statx sx {};
  if (::statx(dir, name, flags, STATX_INO | STATX_MNT_ID, &sx) != 0) return errno;
  // Without a mount id (kernels before 5.8) two binds of one directory look alike: such
  // an identity is never trusted, so nothing is kept.
  if ((sx.stx_mask & STATX_MNT_ID) == 0) return ENOTSUP;
  *out = {sx.stx_dev_major, sx.stx_dev_minor, sx.stx_ino, sx.stx_mnt_id};
  return 0;
}

int CwdCache::get(pid_t pid, int* err) {
  auto it = entries_.find(pid);
  if (it != entries_.end() && pending_.empty() && it->second.pidfd &&
      ::syscall(SYS_pidfd_send_signal, it->second.pidfd.get(), 0, nullptr, 0) == 0) {
    return it->second.cwd.get();  // trusted: no cwd change in flight, and still that task
  }
  if (it != entries_.end()) {
    Identity now;
    const int e = identify(it->second.proc_dir.get(), "cwd", 0, &now);
    if (e == 0 && now == it->second.id) return it->second.cwd.get();
    retired_.push_back(std::move(it->second.cwd));  // a fd given out earlier in this call
    entries_.erase(it);  // moved, gone, or (ENOENT) a reused pid: looked up afresh
  }
  Entry entry;
  // The pidfd first: if its task still lives once the cwd is opened, the number named that
  // task throughout (a number is not reused while its task lives).
  entry.pidfd = task_pidfd(pid);
  entry.proc_dir = UniqueFd(::open(init::proc_dir(pid).c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!entry.proc_dir) {
    *err = errno;
    return -1;
  }
  entry.cwd = UniqueFd(::openat(entry.proc_dir.get(), "cwd", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!entry.cwd) {
    *err = errno;
    return -1;
  }
  // The identity of the fd itself: what is compared later is what was opened.
  if (identify(entry.cwd.get(), "", AT_EMPTY_PATH, &entry.id) != 0) {
    // Not checkable: used once, not kept (the caller's view is still exact).
    retired_.push_back(std::move(entry.cwd));
    return retired_.back().get();
  }
  // Without a pidfd (a thread before Linux 6.9), or when its task ended meanwhile, the
  // entry is checked by statx always.
  if (entry.pidfd && ::syscall(SYS_pidfd_send_signal, entry.pidfd.get(), 0, nullptr, 0) != 0)
    entry.pidfd.reset();
  if (entries_.size() >= kMaxEntries) {
    for (auto& [p, e] : entries_) retired_.push_back(std::move(e.cwd));
    entries_.clear();
  }
  const int fd = entry.cwd.get();
  entries_.emplace(pid, std::move(entry));
  return fd;
}

}  // namespace vigil::init
