#include "observer/cwd_cache.h"
#include "observer/proc_dir.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>

namespace vigil::init {

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
  if (it != entries_.end()) {
    Identity now;
    const int e = identify(it->second.proc_dir.get(), "cwd", 0, &now);
    if (e == 0 && now == it->second.id) return it->second.cwd.get();
    entries_.erase(it);  // moved, gone, or (ENOENT) a reused pid: looked up afresh
  }
  Entry entry;
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
    uncached_ = std::move(entry.cwd);
    return uncached_.get();
  }
  if (entries_.size() >= kMaxEntries) entries_.clear();
  const int fd = entry.cwd.get();
  entries_.emplace(pid, std::move(entry));
  return fd;
}

}  // namespace vigil::init
