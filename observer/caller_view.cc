#include "observer/caller_view.h"

#include <dirent.h>
#include <linux/openat2.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "observer/caller_names.h"
#include "observer/proc_dir.h"
#include "supervisor/core/policy/path_expand.h"

namespace vigil::init {
namespace caller_view {

static std::string read_link(const char* path) {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink(path, buf, sizeof buf);
  return n > 0 && static_cast<size_t>(n) < sizeof buf ? std::string(buf, static_cast<size_t>(n))
                                                      : std::string();
}

std::string self_fd(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

// The name of one of our fds. readlinkat under a kept /proc/self/fd skips walking "/proc"
// and "self" for every record (this process's own table: vigil-init never emulates in a
// child it forked, and its threads share the table).
std::string fd_name(int fd) {
  static const UniqueFd fds(::open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!fds) return read_link(self_fd(fd).c_str());
  char num[16];
  *std::to_chars(num, num + sizeof num - 1, fd).ptr = '\0';
  char buf[PATH_MAX];
  const ssize_t n = ::readlinkat(fds.get(), num, buf, sizeof buf);
  return n > 0 && static_cast<size_t>(n) < sizeof buf ? std::string(buf, static_cast<size_t>(n))
                                                      : std::string();
}

// The errno for a caller vigil-init cannot look into (EACCES/EPERM from /proc or
// pidfd_getfd: it made itself non-dumpable): the call is refused, never performed blind.
int reach_errno(int err) { return err == EBADF || err == ESRCH ? err : EPERM; }

long openat2_(int dir, const char* path, std::uint64_t flags, std::uint64_t mode,
              std::uint64_t resolve) {
  open_how how{};
  how.flags = flags;
  how.mode = mode;
  how.resolve = resolve;
  return ::syscall(SYS_openat2, dir, path, &how, sizeof how);
}


UniqueFd caller_fd(pid_t pid, int fd, int* err) {
  UniqueFd pidfd = task_pidfd(pid);  // the calling thread (proc_dir.h)
  if (!pidfd) {
    *err = errno;
    return {};
  }
  UniqueFd got(static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd.get(), fd, 0)));
  if (!got) *err = errno;
  return got;
}

static UniqueFd caller_cwd(pid_t pid, int* err) {
  UniqueFd fd(::open((proc_dir(pid) + "/cwd").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!fd) *err = errno;
  return fd;
}

// The caller's cwd: borrowed from `cwds` when there is one (the notify loop's), else
// opened for this call (b.fd owns it).
static void cwd_of(Base* b, pid_t pid, CwdCache* cwds, const std::function<void(UniqueFd, int)>& fetch) {
  int err = 0;
  if (cwds == nullptr) {
    UniqueFd fd = caller_cwd(pid, &err);
    fetch(std::move(fd), err);
    return;
  }
  const int fd = cwds->get(pid, &err);
  if (fd < 0) {
    fetch(UniqueFd(), err);
    return;
  }
  b->dir = fd;
}

Base base_of(const PlannedPath& p, pid_t pid, CwdCache* cwds) {
  Base b;
  auto fetch = [&](UniqueFd fd, int err, const char* what) {
    if (!fd) {
      b.error = reach_errno(err);
      if (b.error == EPERM)
        b.why = std::string("vigil-init cannot reach the caller's ") + what +
                " (the process is not dumpable): refused, not performed unseen";
      return;
    }
    b.fd = std::move(fd);
    b.dir = b.fd.get();
  };
  if (!p.path.empty() && p.path[0] == '/') {
    MagicRoute r = route_magic(p.path, pid);
    b.rest = std::move(r.rest);
    int err = 0;
    switch (r.kind) {
      case MagicRoute::Kind::kNone:
        break;  // absolute in the shared root
      case MagicRoute::Kind::kCallerProc:
        // "/proc/<pid>/...": the caller's own entry, wherever /proc numbers it.
        if (outer_proc()) {
          const std::size_t own = ("/proc/" + std::to_string(pid)).size();
          b.rest = proc_dir(pid) + b.rest.substr(std::min(own, b.rest.size()));
        }
        break;
      case MagicRoute::Kind::kCallerFd: {
        UniqueFd fd = caller_fd(pid, r.fd, &err);
        fetch(std::move(fd), err, "fd");
        b.caller_fd = true;
        b.caller_fd_number = r.fd;
        break;
      }
      case MagicRoute::Kind::kCallerCwd:
        cwd_of(&b, pid, cwds, [&](UniqueFd fd, int e) { fetch(std::move(fd), e, "cwd"); });
        break;
    }
    if (b.rest.empty() && !b.caller_fd) b.rest = ".";
    return b;
  }
  b.rest = p.path;
  int err = 0;
  if (p.dirfd == kCwd) {
    cwd_of(&b, pid, cwds, [&](UniqueFd fd, int e) { fetch(std::move(fd), e, "cwd"); });
  } else {
    UniqueFd fd = caller_fd(pid, p.dirfd, &err);
    fetch(std::move(fd), err, "directory fd");
  }
  return b;
}

// "a/b/c" -> ("a/b", "c"); "c" -> (".", "c"); "/c" -> ("/", "c"); "a/b/" -> ("a", "b/").
// The last name keeps its trailing slashes: the kernel checks them (ENOTDIR).
static std::pair<std::string, std::string> split_last(const std::string& path) {
  std::size_t end = path.size();
  while (end > 1 && path[end - 1] == '/') --end;
  const std::size_t slash = path.rfind('/', end - 1);
  if (slash == std::string::npos) return {".", path};
  std::string parent = path.substr(0, slash);
  if (parent.empty()) parent = "/";
  std::string last = path.substr(slash + 1);
  if (last.empty()) last = ".";
  return {parent, last};
}


At locate(const PlannedPath& p, pid_t pid, CwdCache* cwds) {
  At at;
  at.base = base_of(p, pid, cwds);
  if (at.base.error != 0) {
    at.error = at.base.error;
    return at;
  }
  if (at.base.caller_fd && at.base.rest.empty()) {
    // The caller's fd itself (/proc/self/fd/N): a name in procfs, where the kernel's own
    // answer for a name-changing call is what the caller gets.
    at.parent = UniqueFd(::open((proc_dir(pid) + "/fd").c_str(),
                                O_PATH | O_DIRECTORY | O_CLOEXEC));
    at.last = std::to_string(at.base.caller_fd_number);
    at.error = at.parent ? 0 : errno;
    return at;
  }
  if (at.base.rest.empty()) {
    at.error = ENOENT;
    return at;
  }
  auto [parent, last] = split_last(at.base.rest);
  at.last = std::move(last);
  const long fd = openat2_(at.base.dir, parent.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC, 0,
                           RESOLVE_NO_MAGICLINKS);
  if (fd < 0) {
    at.error = errno;
    // Named by folding the spelling onto where it starts, for the record only.
    const std::string start = at.base.dir == AT_FDCWD ? "" : fd_name(at.base.dir);
    at.parent_name = resolve_symlinks(lexically_normal(start + "/" + parent));
    return at;
  }
  at.parent = UniqueFd(static_cast<int>(fd));
  at.parent_name = fd_name(at.parent.get());
  return at;
}

// The target of a call that follows a symlink in its last name, opened O_PATH under
// RESOLVE_NO_MAGICLINKS (a dangling link: ENOENT, as the call would say).
UniqueFd follow(const At& at, int* err) {
  const long fd = openat2_(at.parent.get(), at.last.c_str(), O_PATH | O_CLOEXEC, 0,
                           RESOLVE_NO_MAGICLINKS);
  if (fd < 0) *err = errno;
  return UniqueFd(static_cast<int>(fd));
}

std::string name_in(const PlannedPath& p, pid_t pid, CwdCache* cwds) {
  At at = locate(p, pid, cwds);
  if (at.base.caller_fd && at.base.rest.empty() && at.base.fd) return fd_name(at.base.fd.get());
  return at.name();
}



// The name a call that follows its last symlink lands on, for the record of a call that
// failed: links are followed (by us, never through a magic link) up to the kernel's 40,
// dangling ones included (O_CREAT through a dangling link creates its target).
std::string followed_name(const PlannedPath& p, pid_t pid, CwdCache* cwds) {
  PlannedPath at = p;
  for (int hop = 0; hop < 40; ++hop) {
    At a = locate(at, pid, cwds);
    if (a.error != 0 || !a.parent) return a.name();
    char target[PATH_MAX];
    const ssize_t n = ::readlinkat(a.parent.get(), a.last.c_str(), target, sizeof target);
    if (n <= 0 || static_cast<size_t>(n) >= sizeof target) return a.name();
    const std::string to(target, static_cast<size_t>(n));
    at.path = to[0] == '/' ? to : a.parent_name + "/" + to;
    at.dirfd = kCwd;
  }
  return {};
}

// fs.nr_open, the ceiling on every table whatever its RLIMIT_NOFILE (read once: only the
// host's root can change it, and not while a sandbox is up in practice).
static std::uint64_t nr_open() {
  static const std::uint64_t value = [] {
    char buf[32] = {};
    UniqueFd fd(::open("/proc/sys/fs/nr_open", O_RDONLY | O_CLOEXEC));
    const ssize_t n = fd ? ::read(fd.get(), buf, sizeof buf - 1) : -1;
    return n > 0 ? std::strtoull(buf, nullptr, 10) : std::uint64_t{1} << 20;
  }();
  return value;
}

// The number of fds below `bound` open in the caller's table (its /proc fd directory,
// counted): the install finds a free slot only below its bound, whatever is open above.
static long open_fds_below(pid_t pid, std::uint64_t bound) {
  UniqueFd dir(::open((proc_dir(pid) + "/fd").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir) return -1;
  long count = 0;
  alignas(8) char buf[8192];
  for (;;) {
    const long n = ::syscall(SYS_getdents64, dir.get(), buf, sizeof buf);
    if (n < 0) return -1;
    if (n == 0) return count;
    for (long at = 0; at < n;) {
      const auto* d = reinterpret_cast<const dirent64*>(buf + at);
      if (d->d_name[0] != '.' && std::strtoull(d->d_name, nullptr, 10) < bound) ++count;
      at += d->d_reclen;
    }
  }
}

int fd_room(pid_t pid) {
  rlimit lim{};
  if (::prlimit(pid, RLIMIT_NOFILE, nullptr, &lim) != 0) return reach_errno(errno);
  const std::uint64_t bound = std::min<std::uint64_t>(lim.rlim_cur, nr_open());
  if (bound == 0) return EMFILE;
  // The install takes the lowest free slot: when the highest slot allowed is free, there
  // is one (the common case: one pidfd_getfd that fails EBADF). Otherwise the table is
  // counted. A bound past INT_MAX leaves room however many are open.
  if (bound > static_cast<std::uint64_t>(INT_MAX)) return 0;
  int err = 0;
  UniqueFd top = caller_fd(pid, static_cast<int>(bound - 1), &err);
  if (!top) return err == EBADF ? 0 : reach_errno(err);
  const long open = open_fds_below(pid, bound);
  if (open < 0) return reach_errno(errno);
  return static_cast<std::uint64_t>(open) >= bound ? EMFILE : 0;
}

Performed unnamed(Performed* out) {
  out->why = "vigil-init cannot name the call's target (its path is longer than PATH_MAX): "
             "refused with ENAMETOOLONG rather than performed under no name";
  return refused(out, ENAMETOOLONG, std::string());
}

}  // namespace caller_view

using namespace caller_view;

void take_back(Performed* done) {
  if (!done->created || done->resolved.empty() || done->resolved[0] != '/') return;
  done->created = false;
  // The parent, reached with no symlink anywhere (the name is canonical), then the name
  // unlinked only while it is still the empty file this call made.
  const std::size_t slash = done->resolved.rfind('/');
  const std::string parent = slash == 0 ? "/" : done->resolved.substr(0, slash);
  const std::string last = done->resolved.substr(slash + 1);
  const long dir = openat2_(AT_FDCWD, parent.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC, 0,
                            RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
  UniqueFd d(static_cast<int>(dir));
  struct stat st {};
  if (d && ::fstatat(d.get(), last.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
      st.st_dev == done->created_dev && st.st_ino == done->created_ino && st.st_size == 0 &&
      ::unlinkat(d.get(), last.c_str(), 0) == 0)
    return;
  done->why = "the file was created, then the caller's fd table filled before it could be "
              "installed; it is still there (changed meanwhile)";
}

std::string name_of(const PlannedPath& p, pid_t pid) { return name_in(p, pid, nullptr); }

std::string resolved_name(const PlannedPath& p, pid_t pid, bool follow, CwdCache* cwds) {
  return follow ? followed_name(p, pid, cwds) : name_in(p, pid, cwds);
}

std::size_t read_proc_file(pid_t pid, const char* file, char* buf, std::size_t size) {
  UniqueFd fd(::open((proc_dir(pid) + "/" + file).c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd || size == 0) return 0;
  const ssize_t n = ::read(fd.get(), buf, size - 1);
  if (n <= 0) return 0;
  buf[n] = '\0';
  return static_cast<std::size_t>(n);
}

Result<mode_t> caller_umask(pid_t pid) {
  char buf[4096];
  if (read_proc_file(pid, "status", buf, sizeof buf) == 0)
    return make_error(Errc::kSystem, "vigil-init cannot read the caller's umask (/proc/" +
                                         std::to_string(pid) + "/status: " +
                                         std::strerror(errno) +
                                         "): refused, not created under a guessed umask");
  return umask_from_status(buf);
}

Result<mode_t> umask_from_status(std::string_view status) {
  const std::size_t at = status.find("\nUmask:");
  if (at == std::string_view::npos)
    return make_error(Errc::kUnsupported,
                      "the kernel's /proc/PID/status has no Umask line (Linux 4.7+ has it): "
                      "refused, not created under a guessed umask");
  std::size_t i = at + 7;
  while (i < status.size() && (status[i] == ' ' || status[i] == '\t')) ++i;
  mode_t mask = 0;
  std::size_t digits = 0;
  for (; i < status.size() && status[i] >= '0' && status[i] <= '7' && digits < 6; ++i, ++digits)
    mask = static_cast<mode_t>(mask * 8 + static_cast<mode_t>(status[i] - '0'));
  if (digits == 0 || (i < status.size() && status[i] != '\n') || mask > 0777)
    return make_error(Errc::kInternal, "the caller's Umask line in /proc/PID/status is not "
                                       "an octal mask: refused, not created under a guessed umask");
  return mask;
}

std::string caller_fd_target(pid_t pid, int fd) {
  int err = 0;
  UniqueFd got = caller_fd(pid, fd, &err);
  return got ? fd_name(got.get()) : std::string();
}

}  // namespace vigil::init
