// The gatekeeper's calls other than the open family (emulate_open.cc), performed in the
// caller's view (caller_view.h): mkdir, mknod, unlink, rename, link, symlink, chmod, chown,
// utime, truncate, the xattr calls and file_setattr.
#include "observer/emulate.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <linux/fs.h>
#include <signal.h>
#include <sys/resource.h>
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
#include "observer/caller_view.h"
#include "observer/git_rules.h"
#include "observer/proc_dir.h"
#include "supervisor/core/policy/path_expand.h"

namespace vigil::init {
namespace {

using namespace caller_view;

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

// truncate(2) under the caller's RLIMIT_FSIZE. A growing truncate past it fails EFBIG
// and sends the calling thread SIGXFSZ (inode_newsize_ok), after every check the kernel
// makes first (EISDIR, EROFS, EACCES, ETXTBSY, ...): so the call is made with the caller's
// soft limit in force in vigil-init (which ignores the signal it then gets itself), and
// the signal goes to the caller when the limit was what refused it. Only for a regular
// file that grows under a finite limit; the limit is put back after.
long truncate_as_caller(pid_t pid, int target, const std::string& via, std::uint64_t length) {
  const auto size = static_cast<off_t>(length);
  struct stat st {};
  rlimit theirs{}, ours{};
  const bool grows = ::fstat(target, &st) == 0 && S_ISREG(st.st_mode) && size > st.st_size;
  if (!grows || ::prlimit(pid, RLIMIT_FSIZE, nullptr, &theirs) != 0 ||
      theirs.rlim_cur == RLIM_INFINITY || ::getrlimit(RLIMIT_FSIZE, &ours) != 0)
    return ::truncate(via.c_str(), size);
  // Ignored from the first such call on, never before: the worker, forked earlier, keeps
  // the default, and so does every command.
  static const bool ignored = ::signal(SIGXFSZ, SIG_IGN) != SIG_ERR;
  (void)ignored;
  const rlimit scoped{std::min(theirs.rlim_cur, ours.rlim_max), ours.rlim_max};
  ::setrlimit(RLIMIT_FSIZE, &scoped);
  const long rc = ::truncate(via.c_str(), size);
  const int err = errno;
  ::setrlimit(RLIMIT_FSIZE, &ours);
  if (rc != 0 && err == EFBIG && length > theirs.rlim_cur) {
    // To the thread that made the call (PIDFD_SIGNAL_THREAD, 6.9); before that its pidfd
    // is its group's, which takes the signal for it.
    constexpr unsigned kSignalThread = 1;
    UniqueFd pidfd = task_pidfd(pid);
    if (pidfd && ::syscall(SYS_pidfd_send_signal, pidfd.get(), SIGXFSZ, nullptr, kSignalThread) != 0)
      ::syscall(SYS_pidfd_send_signal, pidfd.get(), SIGXFSZ, nullptr, 0);
  }
  errno = err;
  return rc;
}

}  // namespace

namespace {

// What a located call acts on: its names (the parent and last component of each), the
// target by fd when the call acts on what a name points at, and the caller's umask for
// what it makes.
struct Operands {
  At& to;
  At& from;
  UniqueFd& target;
  std::string via;  // /proc/self/fd/N of the target, when there is one
  int dir;
  const char* last;
  mode_t umask;
  bool follows;
};

// linkat(): from a caller's fd, our own fd or a followed link, the source is linked through
// our own /proc/self/fd entry; else by its parent and name.
void perform_link(const CallPlan& plan, pid_t pid, const Operands& o, Performed* out) {
  // linkat(AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH; through our own /proc/self/fd
  // link with AT_SYMLINK_FOLLOW it needs nothing more than the caller's call did.
  if (plan.flags & ~std::uint64_t{AT_SYMLINK_FOLLOW | AT_EMPTY_PATH}) {
    out->error = EINVAL;
    return;
  }
  const bool from_fd = plan.from.path.empty() && (plan.flags & AT_EMPTY_PATH) != 0;
  const bool from_own = o.from.base.caller_fd && o.from.base.rest.empty();
  if (from_fd || from_own || o.follows) {
    int err = 0;
    UniqueFd src = from_fd    ? caller_fd(pid, plan.from.dirfd, &err)
                   : from_own ? UniqueFd(::fcntl(o.from.base.fd.get(), F_DUPFD_CLOEXEC, 0))
                              : follow(o.from, &err);
    if (!src) {
      out->error = err != 0 ? err : errno;
      return;
    }
    out->from_resolved = fd_name(src.get());
    if (out->from_resolved.empty()) {
      unnamed(out);
      return;
    }
    done(out, ::linkat(AT_FDCWD, self_fd(src.get()).c_str(), o.dir, o.last, AT_SYMLINK_FOLLOW));
  } else {
    done(out, ::linkat(o.from.parent.get(), o.from.last.c_str(), o.dir, o.last, 0));
  }
}

// The call itself, on the names and fds vigil-init resolved and judged.
void act(const CallPlan& plan, pid_t pid, bool may_block, const Operands& o, Performed* out) {
  const Emulation e = plan.row->emulation;
  switch (e) {
    case Emulation::kTruncate:
      if (!may_block && lease_held(o.target.get())) {
        out->would_block = true;  // performed, waiting for the break, on a thread of its own
        break;
      }
      done(out, truncate_as_caller(pid, o.target.get(), o.via, plan.args[1]));
      break;
    case Emulation::kMkdir: {
      const CallerUmask scoped(o.umask);
      done(out, ::mkdirat(o.dir, o.last, static_cast<mode_t>(plan.mode & 07777)));
      break;
    }
    case Emulation::kMknod: {
      const mode_t m = static_cast<mode_t>(plan.mode);
      const CallerUmask scoped(o.umask);
      done(out, ::mknodat(o.dir, o.last, (m & S_IFMT) | (m & 07777),
                           static_cast<dev_t>(plan.args[plan.row->mode + 1])));
      break;
    }
    case Emulation::kUnlink: {
      const int f = plan.row->name == "rmdir" ? AT_REMOVEDIR
                                              : static_cast<int>(plan.flags & 0xffffffffu);
      done(out, ::unlinkat(o.dir, o.last, f));
      break;
    }
    case Emulation::kRename:
      done(out, ::syscall(SYS_renameat2, o.from.parent.get(), o.from.last.c_str(), o.dir, o.last,
                           static_cast<unsigned>(plan.flags)));
      break;
    case Emulation::kLink:
      perform_link(plan, pid, o, out);
      break;
    case Emulation::kSymlink:
      done(out, ::symlinkat(plan.from.path.c_str(), o.dir, o.last));
      break;
    case Emulation::kChmod:
      if (o.target) {
        done(out, ::chmod(o.via.c_str(), static_cast<mode_t>(plan.mode)));
      } else {
        // fchmodat2(AT_SYMLINK_NOFOLLOW): EOPNOTSUPP on a link, as the kernel answers.
        static const long nr = native_syscall_number("fchmodat2").value_or(-1);
        done(out, ::syscall(nr, o.dir, o.last, plan.mode, AT_SYMLINK_NOFOLLOW));
      }
      break;
    case Emulation::kChown: {
      const int ua = plan.row->name == "fchownat" ? 2 : 1;
      const auto uid = static_cast<uid_t>(plan.args[ua]);
      const auto gid = static_cast<gid_t>(plan.args[ua + 1]);
      if (o.target) {
        done(out, ::fchownat(o.target.get(), "", uid, gid, AT_EMPTY_PATH));
      } else {
        done(out, ::fchownat(o.dir, o.last, uid, gid, AT_SYMLINK_NOFOLLOW));
      }
      break;
    }
    case Emulation::kUtime: {
      timespec ts[2] = {{static_cast<time_t>(plan.times[0]), static_cast<long>(plan.times[1])},
                        {static_cast<time_t>(plan.times[2]), static_cast<long>(plan.times[3])}};
      if (o.target) {
        done(out, ::utimensat(AT_FDCWD, o.via.c_str(), ts, 0));
      } else {
        done(out, ::utimensat(o.dir, o.last, ts, AT_SYMLINK_NOFOLLOW));
      }
      break;
    }
    case Emulation::kSetxattr:
    case Emulation::kRemovexattr:
      done(out, xattr_call(plan, o.target ? o.via : self_fd(o.dir) + "/" + o.to.last, !o.target));
      break;
    case Emulation::kFileSetattr: {
      static const long nr = native_syscall_number("file_setattr").value_or(-1);
      const std::string at = o.target ? o.via : self_fd(o.dir) + "/" + o.to.last;
      done(out, ::syscall(nr, AT_FDCWD, at.c_str(), plan.xattr_value.data(),
                           plan.xattr_value.size(), o.target ? 0 : AT_SYMLINK_NOFOLLOW));
      break;
    }
    default:
      out->error = ENOSYS;
      break;
  }
}

// The gate on what the call makes or changes: "" lets it through, else why not.
std::string gate_verdict(const CallPlan& plan, const Performed& out, At& from, const Gate& gate) {
  const Emulation e = plan.row->emulation;
  const bool creates = e == Emulation::kMkdir || e == Emulation::kMknod ||
                       e == Emulation::kLink || e == Emulation::kSymlink ||
                       e == Emulation::kRename;
  if (creates) {
    const bool rename = e == Emulation::kRename;
    std::string why = gate(out.resolved, rename ? out.from_resolved : std::string());
    // RENAME_EXCHANGE puts the source under the target's name too (with what the target
    // holds); RENAME_WHITEOUT makes a node (a whiteout) under the source's name.
    if (why.empty() && rename && (plan.flags & (RENAME_EXCHANGE | RENAME_WHITEOUT)) != 0) {
      const bool exchange = (plan.flags & RENAME_EXCHANGE) != 0;
      why = gate(out.from_resolved, exchange ? out.resolved : std::string());
    }
    if (!why.empty()) return why;
  }
  // A change to a file that is there already, or a second name for one (a link's source,
  // followed when the link follows it), when git gives the name a meaning (a config, a
  // hook: observer/git_rules.h): judged as its making would be.
  std::string changed;
  if (e == Emulation::kTruncate || e == Emulation::kChmod) changed = out.resolved;
  if (e == Emulation::kLink) {
    changed = out.from_resolved;
    if ((plan.flags & AT_SYMLINK_FOLLOW) != 0) {
      int err = 0;
      UniqueFd src = follow(from, &err);
      if (src) changed = fd_name(src.get());
    }
  }
  if (!changed.empty() && git_may_judge_change(changed)) return gate(changed, std::string());
  return {};
}

// The target by fd, for calls that act on what a final symlink points at (or on the
// caller's fd, for AT_EMPTY_PATH and /proc/self/fd/N): acted on as /proc/self/fd/M, a hop
// through our own fd, never the caller's spelling again. An empty fd when the call acts on
// the name itself; nullopt, with `err`, when the fd cannot be had.
std::optional<UniqueFd> target_of(const CallPlan& plan, pid_t pid, At& to, bool follows,
                                  int* err) {
  if (plan.row->emulation == Emulation::kLink) return UniqueFd();
  const bool on_own_fd = plan.on_fd || (to.base.caller_fd && to.base.rest.empty());
  if (on_own_fd && !plan.on_fd) return UniqueFd(::fcntl(to.base.fd.get(), F_DUPFD_CLOEXEC, 0));
  if (on_own_fd) {
    int caller_err = 0;
    UniqueFd fd = caller_fd(pid, plan.target.dirfd, &caller_err);
    if (!fd) {
      *err = reach_errno(caller_err);
      return std::nullopt;
    }
    return fd;
  }
  if (!follows) return UniqueFd();
  UniqueFd fd = follow(to, err);
  if (!fd) return std::nullopt;
  return fd;
}

}  // namespace

Performed perform(const CallPlan& plan, pid_t pid, bool may_block, const Gate* gate,
                  CwdCache* cwds, const Keep* keep) {
  if (plan.row->emulation == Emulation::kOpen)
    return perform_open(plan, pid, may_block, gate, cwds, keep);
  if (plan.row->emulation == Emulation::kBind) return perform_bind(plan, pid, gate, cwds);
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
  int err = 0;
  std::optional<UniqueFd> had = target_of(plan, pid, to, follows, &err);
  if (!had) {
    out.error = err;
    return out;
  }
  UniqueFd target = std::move(*had);
  if (target) out.resolved = fd_name(target.get());
  // A target (or source) vigil-init cannot name is refused before anything is done.
  if (out.resolved.empty() || (two_names && out.from_resolved.empty())) return unnamed(&out);
  if (gate != nullptr) {
    if (std::string why = gate_verdict(plan, out, from, *gate); !why.empty()) {
      out.error = EACCES;
      out.why = std::move(why);
      return out;
    }
  }
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
  const int dir = to.parent.get();
  // What the call replaces or removes: a truncate's target, an unlink's or a rename's
  // name (RENAME_EXCHANGE: both), before it is gone.
  if (keep != nullptr && (e == Emulation::kTruncate || e == Emulation::kUnlink || e == Emulation::kRename)) {
    if (target) keep->before(target.get(), "", 0, true);
    else keep->before(dir, to.last, 0, false);
    if (e == Emulation::kRename && (plan.flags & RENAME_EXCHANGE) != 0)
      keep->before(from.parent.get(), from.last, 0, false);
  }
  const Operands o{to, from, target, target ? self_fd(target.get()) : std::string(), dir,
                   to.last.c_str(), umask, follows};
  act(plan, pid, may_block, o, &out);
  return out;
}

}  // namespace vigil::init
