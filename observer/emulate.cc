#include "observer/emulate.h"
#include "observer/proc_dir.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <linux/fs.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

#include "filters/syscall_names.h"
#include "supervisor/core/policy/path_expand.h"

namespace vigil::init {
namespace {

std::string read_link(const char* path) {
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
  std::snprintf(num, sizeof num, "%d", fd);
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

// Where a caller's relative name starts, and what stays to resolve from there.
struct Base {
  UniqueFd fd;        // the start directory (or, kCallerFd, the caller's file)
  int dir = AT_FDCWD;  // fd.get(), or AT_FDCWD for an absolute path
  std::string rest;
  bool caller_fd = false;  // rest is under (or, empty, is) the caller's fd
  int caller_fd_number = -1;
  int error = 0;
  std::string why;
};

UniqueFd caller_fd(pid_t pid, int fd, int* err) {
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (!pidfd) {
    *err = errno;
    return {};
  }
  UniqueFd got(static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd.get(), fd, 0)));
  if (!got) *err = errno;
  return got;
}

UniqueFd caller_cwd(pid_t pid, int* err) {
  UniqueFd fd(::open((proc_dir(pid) + "/cwd").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!fd) *err = errno;
  return fd;
}

// The caller's cwd: borrowed from `cwds` when there is one (the notify loop's), else
// opened for this call (b.fd owns it).
void cwd_of(Base* b, pid_t pid, CwdCache* cwds, const std::function<void(UniqueFd, int)>& fetch) {
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
std::pair<std::string, std::string> split_last(const std::string& path) {
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

// One name of a call, resolved to its parent directory (no magic link followed there).
struct At {
  Base base;
  UniqueFd parent;
  std::string last;
  int error = 0;
  std::string parent_name;  // for the record
  std::string name() const {
    if (parent_name.empty()) return {};
    return parent_name == "/" ? "/" + last : parent_name + "/" + last;
  }
};

At locate(const PlannedPath& p, pid_t pid, CwdCache* cwds = nullptr) {
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

// Whether truncating the regular file `target` (an O_PATH fd) would wait for another
// process's lease on it to break (up to lease-break-time, with every other caller's calls
// held meanwhile). A non-blocking open for writing asks the same without waiting: it
// fails EWOULDBLOCK (and starts the break, as the truncate would). Only regular files are
// probed: opening a device has effects of its own.
bool lease_held(int target) {
  struct stat st {};
  if (::fstat(target, &st) != 0 || !S_ISREG(st.st_mode)) return false;
  UniqueFd probe(::open(self_fd(target).c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  return !probe && errno == EWOULDBLOCK;
}

// A call vigil-init refused before performing it: `why` is already in out->why.
Performed refused(Performed* out, int error, std::string resolved) {
  out->error = error;
  out->resolved = std::move(resolved);
  return std::move(*out);
}

void done(Performed* out, long rc) {
  if (rc < 0) {
    out->error = errno;
  } else {
    out->value = rc;
  }
}

}  // namespace

namespace {
std::string name_in(const PlannedPath& p, pid_t pid, CwdCache* cwds) {
  At at = locate(p, pid, cwds);
  if (at.base.caller_fd && at.base.rest.empty() && at.base.fd) return fd_name(at.base.fd.get());
  return at.name();
}
}  // namespace

std::string name_of(const PlannedPath& p, pid_t pid) { return name_in(p, pid, nullptr); }

namespace {

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

}  // namespace

std::string resolved_name(const PlannedPath& p, pid_t pid, bool follow, CwdCache* cwds) {
  return follow ? followed_name(p, pid, cwds) : name_in(p, pid, cwds);
}

namespace {

// setxattr and removexattr in every form, on `at`: our own fd of the target (or of its
// parent then the last name, for the forms that do not follow it). The *at forms (6.13)
// are called as such, so a kernel without them answers ENOSYS as it would the caller.
long xattr_call(const CallPlan& plan, const std::string& at, bool nofollow) {
  const char* name = plan.xattr_name.c_str();
  const void* value = plan.xattr_value.data();
  const std::size_t size = plan.xattr_value.size();
  const int xflags = static_cast<int>(plan.args[4]);
  if (plan.row->name.ends_with("at")) {
    const unsigned at_flags = nofollow ? AT_SYMLINK_NOFOLLOW : 0;
    if (plan.row->emulation == Emulation::kRemovexattr) {
      static const long nr = native_syscall_number("removexattrat").value_or(-1);
      return ::syscall(nr, AT_FDCWD, at.c_str(), at_flags, name);
    }
    static const long nr = native_syscall_number("setxattrat").value_or(-1);
    struct {
      std::uint64_t value;
      std::uint32_t size, flags;
    } args{reinterpret_cast<std::uintptr_t>(value), static_cast<std::uint32_t>(size),
           static_cast<std::uint32_t>(xflags)};
    return ::syscall(nr, AT_FDCWD, at.c_str(), at_flags, name, &args, sizeof args);
  }
  if (plan.row->emulation == Emulation::kRemovexattr)
    return nofollow ? ::lremovexattr(at.c_str(), name) : ::removexattr(at.c_str(), name);
  return nofollow ? ::lsetxattr(at.c_str(), name, value, size, xflags)
                  : ::setxattr(at.c_str(), name, value, size, xflags);
}

Performed perform_open(const CallPlan& plan, pid_t pid, bool may_block, const Gate* gate,
                       CwdCache* cwds, const Keep* keep) {
  Performed out;
  std::uint64_t flags = plan.flags;
  if (plan.row->name != "openat2") {
    // open/openat/creat ignore unknown bits and, under O_PATH, every bit but three;
    // openat2 refuses both, so they are dropped here as the kernel drops them.
    flags &= O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND | O_NONBLOCK |
             O_DSYNC | O_ASYNC | O_DIRECT | O_LARGEFILE | O_DIRECTORY | O_NOFOLLOW |
             O_NOATIME | O_CLOEXEC | O_SYNC | O_PATH | O_TMPFILE;
    if ((flags & O_PATH) != 0) flags &= O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  }
  out.cloexec = (flags & O_CLOEXEC) != 0;
  const bool creates = (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE;
  std::uint64_t mode = plan.mode;
  if (plan.row->name != "openat2") mode = creates ? (mode & 07777) : 0;
  // The caller's umask costs a read of /proc/PID/status: only when a file is made. When
  // it cannot be read the call is refused (EPERM), never performed under a guessed mask.
  bool umask_failed = false;
  auto umasked = [&]() -> std::uint64_t {
    if (!creates) return mode;
    Result<mode_t> um = caller_umask(pid);
    if (!um) {
      umask_failed = true;
      out.why = um.error().message;
      return 0;
    }
    return mode & ~static_cast<std::uint64_t>(*um);
  };
  // Unless the caller asked for O_NONBLOCK, the first try adds it: an open that would
  // wait (a FIFO with no peer) must not hold every other process's calls.
  const bool caller_nonblock = (flags & O_NONBLOCK) != 0;
  const std::uint64_t ours = flags | O_CLOEXEC | (may_block ? 0 : O_NONBLOCK);
  const std::uint64_t resolve = plan.resolve | RESOLVE_NO_MAGICLINKS;

  Base b = base_of(plan.target, pid, cwds);
  if (b.error != 0) {
    out.error = b.error;
    out.why = std::move(b.why);
    return out;
  }
  long fd = -1;
  const bool reopen = b.caller_fd && b.rest.empty();
  // An O_CREAT|O_EXCL open never touches an existing file. One without O_TRUNC changes
  // nothing by itself: its pre-image is taken from the fd it opens (keep->opened below),
  // when the open found the file there, before the caller can write through it.
  const bool keeps = keep != nullptr && plan.writes && (flags & (O_CREAT | O_EXCL)) != (O_CREAT | O_EXCL);
  const bool keep_after = keeps && !reopen && (flags & O_TRUNC) == 0;
  bool existed = false;  // the open found the name there (it created nothing)
  if (keeps && !keep_after)
    keep->before(reopen ? b.fd.get() : b.dir, b.rest, resolve, (flags & O_NOFOLLOW) == 0);
  if (gate != nullptr && (flags & O_CREAT) != 0 && !reopen) {
    // Only a name that does not exist yet is created: an existing file is opened without
    // O_CREAT first (the common case, a rewrite, costs no lookup); on ENOENT the name the
    // open would create, found as it would (through a final symlink unless O_NOFOLLOW or
    // O_EXCL), goes to the gate first.
    const bool excl = (flags & O_EXCL) != 0;
    if (!excl) {
      fd = openat2_(b.dir, b.rest.c_str(), ours & ~std::uint64_t{O_CREAT}, 0, resolve);
      existed = fd >= 0;
    }
    if (excl || (fd < 0 && errno == ENOENT)) {
      const bool follows_last = (flags & O_NOFOLLOW) == 0 && !excl;
      const std::string name =
          follows_last ? followed_name(plan.target, pid, cwds) : name_in(plan.target, pid, cwds);
      if (std::string why = (*gate)(name); !why.empty()) {
        out.error = EACCES;
        out.why = std::move(why);
        out.resolved = name;
        return out;
      }
      const std::uint64_t m = umasked();
      if (umask_failed) return refused(&out, EPERM, name);
      fd = openat2_(b.dir, b.rest.c_str(), ours, m, resolve);
    }
  } else if (reopen) {
    // /dev/fd/N itself: reopen the caller's file through our copy of its fd (this one
    // hop through a magic link is ours, to the file the caller named).
    if ((resolve & ~RESOLVE_NO_MAGICLINKS) != 0 || (flags & O_NOFOLLOW) != 0) {
      fd = -1;
      errno = ELOOP;
    } else {
      const std::uint64_t m = umasked();
      if (umask_failed) return refused(&out, EPERM, fd_name(b.fd.get()));
      fd = openat2_(AT_FDCWD, self_fd(b.fd.get()).c_str(), ours, m, 0);
    }
  } else {
    const std::uint64_t m = umasked();
    if (umask_failed) return refused(&out, EPERM, name_in(plan.target, pid, cwds));
    fd = openat2_(b.dir, b.rest.c_str(), ours, m, resolve);
    // Without O_CREAT an open only ever finds the name; with it (no gate: tests) the
    // open may have made it, and nothing it made has a pre-image.
    existed = fd >= 0 && (flags & O_CREAT) == 0;
  }
  if (fd < 0) {
    out.error = errno;
    // Two waits the caller asked for that our O_NONBLOCK cut short: a FIFO opened for
    // writing with no reader yet (ENXIO), and a file another process holds a lease on,
    // whose break the open must wait for (EWOULDBLOCK, up to lease-break-time). Both are
    // performed again, waiting, on a thread of their own; the caller never sees the EAGAIN
    // the kernel would not have given it.
    if (!may_block && !caller_nonblock && (out.error == ENXIO || out.error == EWOULDBLOCK)) {
      out.would_block = true;
      return out;
    }
    const bool follows = (flags & O_NOFOLLOW) == 0 && (flags & (O_CREAT | O_EXCL)) != (O_CREAT | O_EXCL);
    out.resolved = follows ? followed_name(plan.target, pid, cwds) : name_in(plan.target, pid, cwds);
    return out;
  }
  UniqueFd opened(static_cast<int>(fd));
  if (!may_block && !caller_nonblock) {
    // Only a read-only open of a FIFO waits for a peer that O_NONBLOCK skipped: a FIFO
    // opened for writing with no reader failed above (ENXIO, moved to a thread), with a
    // reader it opens at once either way, and O_RDWR never waits. So only O_RDONLY opens
    // (O_CREAT or O_TRUNC on a read) pay the fstat.
    struct stat st {};
    if ((flags & O_ACCMODE) == O_RDONLY && ::fstat(opened.get(), &st) == 0 &&
        S_ISFIFO(st.st_mode)) {
      // Opened at once only because of O_NONBLOCK (a reader of a FIFO with no writer):
      // the caller asked to wait, so the wait happens on a thread of its own.
      out.would_block = true;
      return out;
    }
    if (::fcntl(opened.get(), F_SETFL, static_cast<int>(flags & ~std::uint64_t{O_NONBLOCK})) != 0) {
      out.error = errno;
      return out;
    }
  }
  out.resolved = fd_name(opened.get());
  if (keep_after && existed) keep->opened(opened.get(), out.resolved);
  out.fd = std::move(opened);
  return out;
}

}  // namespace

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

Performed perform(const CallPlan& plan, pid_t pid, bool may_block, const Gate* gate,
                  CwdCache* cwds, const Keep* keep) {
  if (plan.row->emulation == Emulation::kOpen)
    return perform_open(plan, pid, may_block, gate, cwds, keep);
  Performed out;
  const Emulation e = plan.row->emulation;
  const bool nofollow = (plan.at_flags & AT_SYMLINK_NOFOLLOW) != 0;
  // linkat follows only with AT_SYMLINK_FOLLOW; the rest by what the call is.
  const bool follows = e == Emulation::kLink ? (plan.flags & AT_SYMLINK_FOLLOW) != 0
                                             : plan.row->follows && !nofollow;

  // AT_EMPTY_PATH with an empty name: the call acts on the fd itself, no name to locate.
  At to = plan.on_fd ? At{} : locate(plan.target, pid, cwds);
  At from;
  const bool two_names = plan.has_from && e != Emulation::kSymlink;
  if (two_names) from = locate(plan.from, pid, cwds);
  out.resolved = to.name();
  if (two_names) out.from_resolved = from.name();
  for (At* at : {&to, two_names ? &from : nullptr}) {
    if (at == nullptr || at->error == 0) continue;
    out.error = at->error;
    out.why = at->base.why;
    return out;
  }
  // The target itself, for calls that act on what a final symlink points at (or on the
  // caller's fd, for AT_EMPTY_PATH and /proc/self/fd/N): acted on as /proc/self/fd/M, a
  // hop through our own fd, never the caller's spelling again.
  UniqueFd target;
  const bool on_own_fd = plan.on_fd || (to.base.caller_fd && to.base.rest.empty());
  if (on_own_fd && e != Emulation::kLink) {
    if (plan.on_fd) {
      int err = 0;
      target = caller_fd(pid, plan.target.dirfd, &err);
      if (!target) {
        out.error = reach_errno(err);
        return out;
      }
    } else {
      target = UniqueFd(::fcntl(to.base.fd.get(), F_DUPFD_CLOEXEC, 0));
    }
  } else if (follows && e != Emulation::kLink) {
    int err = 0;
    target = follow(to, &err);
    if (!target) {
      out.error = err;
      return out;
    }
  }
  if (target) out.resolved = fd_name(target.get());
  const bool creates = e == Emulation::kMkdir || e == Emulation::kMknod ||
                       e == Emulation::kLink || e == Emulation::kSymlink ||
                       e == Emulation::kRename;
  if (gate != nullptr && creates) {
    std::string why = (*gate)(out.resolved);
    // RENAME_EXCHANGE puts the source under the target's name too.
    if (why.empty() && e == Emulation::kRename && (plan.flags & RENAME_EXCHANGE) != 0)
      why = (*gate)(out.from_resolved);
    if (!why.empty()) {
      out.error = EACCES;
      out.why = std::move(why);
      return out;
    }
  }
  const std::string via = target ? self_fd(target.get()) : std::string();
  const int dir = to.parent.get();
  const char* last = to.last.c_str();
  mode_t umask = 0;
  if (e == Emulation::kMkdir || e == Emulation::kMknod) {
    Result<mode_t> um = caller_umask(pid);
    if (!um) {
      out.why = um.error().message;
      out.error = EPERM;
      return out;
    }
    umask = *um;
  }
  // What the call replaces or removes: a truncate's target, an unlink's or a rename's
  // name (RENAME_EXCHANGE: both), before it is gone.
  if (keep != nullptr && (e == Emulation::kTruncate || e == Emulation::kUnlink || e == Emulation::kRename)) {
    if (target) keep->before(target.get(), "", 0, true);
    else keep->before(dir, to.last, 0, false);
    if (e == Emulation::kRename && (plan.flags & RENAME_EXCHANGE) != 0)
      keep->before(from.parent.get(), from.last, 0, false);
  }
  switch (e) {
    case Emulation::kTruncate:
      if (!may_block && lease_held(target.get())) {
        out.would_block = true;  // performed, waiting for the break, on a thread of its own
        break;
      }
      done(&out, ::truncate(via.c_str(), static_cast<off_t>(plan.args[1])));
      break;
    case Emulation::kMkdir:
      done(&out, ::mkdirat(dir, last, static_cast<mode_t>(plan.mode & 07777 & ~umask)));
      break;
    case Emulation::kMknod: {
      const mode_t m = static_cast<mode_t>(plan.mode);
      done(&out, ::mknodat(dir, last, (m & S_IFMT) | (m & 07777 & ~umask),
                           static_cast<dev_t>(plan.args[plan.row->mode + 1])));
      break;
    }
    case Emulation::kUnlink: {
      const int f = plan.row->name == "rmdir" ? AT_REMOVEDIR
                                              : static_cast<int>(plan.flags & 0xffffffffu);
      done(&out, ::unlinkat(dir, last, f));
      break;
    }
    case Emulation::kRename:
      done(&out, ::syscall(SYS_renameat2, from.parent.get(), from.last.c_str(), dir, last,
                           static_cast<unsigned>(plan.flags)));
      break;
    case Emulation::kLink: {
      // linkat(AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH; through our own /proc/self/fd
      // link with AT_SYMLINK_FOLLOW it needs nothing more than the caller's call did.
      if (plan.flags & ~std::uint64_t{AT_SYMLINK_FOLLOW | AT_EMPTY_PATH}) {
        out.error = EINVAL;
        break;
      }
      const bool from_fd = plan.from.path.empty() && (plan.flags & AT_EMPTY_PATH) != 0;
      const bool from_own = from.base.caller_fd && from.base.rest.empty();
      if (from_fd || from_own || follows) {
        int err = 0;
        UniqueFd src = from_fd    ? caller_fd(pid, plan.from.dirfd, &err)
                       : from_own ? UniqueFd(::fcntl(from.base.fd.get(), F_DUPFD_CLOEXEC, 0))
                                  : follow(from, &err);
        if (!src) {
          out.error = err != 0 ? err : errno;
          break;
        }
        out.from_resolved = fd_name(src.get());
        done(&out, ::linkat(AT_FDCWD, self_fd(src.get()).c_str(), dir, last, AT_SYMLINK_FOLLOW));
      } else {
        done(&out, ::linkat(from.parent.get(), from.last.c_str(), dir, last, 0));
      }
      break;
    }
    case Emulation::kSymlink:
      done(&out, ::symlinkat(plan.from.path.c_str(), dir, last));
      break;
    case Emulation::kChmod:
      if (target) {
        done(&out, ::chmod(via.c_str(), static_cast<mode_t>(plan.mode)));
      } else {
        // fchmodat2(AT_SYMLINK_NOFOLLOW): EOPNOTSUPP on a link, as the kernel answers.
        static const long nr = native_syscall_number("fchmodat2").value_or(-1);
        done(&out, ::syscall(nr, dir, last, plan.mode, AT_SYMLINK_NOFOLLOW));
      }
      break;
    case Emulation::kChown: {
      const int ua = plan.row->name == "fchownat" ? 2 : 1;
      const auto uid = static_cast<uid_t>(plan.args[ua]);
      const auto gid = static_cast<gid_t>(plan.args[ua + 1]);
      if (target) {
        done(&out, ::fchownat(target.get(), "", uid, gid, AT_EMPTY_PATH));
      } else {
        done(&out, ::fchownat(dir, last, uid, gid, AT_SYMLINK_NOFOLLOW));
      }
      break;
    }
    case Emulation::kUtime: {
      timespec ts[2] = {{static_cast<time_t>(plan.times[0]), static_cast<long>(plan.times[1])},
                        {static_cast<time_t>(plan.times[2]), static_cast<long>(plan.times[3])}};
      if (target) {
        done(&out, ::utimensat(AT_FDCWD, via.c_str(), ts, 0));
      } else {
        done(&out, ::utimensat(dir, last, ts, AT_SYMLINK_NOFOLLOW));
      }
      break;
    }
    case Emulation::kSetxattr:
    case Emulation::kRemovexattr:
      done(&out, xattr_call(plan, target ? via : self_fd(dir) + "/" + to.last, !target));
      break;
    case Emulation::kFileSetattr: {
      static const long nr = native_syscall_number("file_setattr").value_or(-1);
      const std::string at = target ? via : self_fd(dir) + "/" + to.last;
      done(&out, ::syscall(nr, AT_FDCWD, at.c_str(), plan.xattr_value.data(),
                           plan.xattr_value.size(), target ? 0 : AT_SYMLINK_NOFOLLOW));
      break;
    }
    default:
      out.error = ENOSYS;
      break;
  }
  return out;
}

}  // namespace vigil::init
