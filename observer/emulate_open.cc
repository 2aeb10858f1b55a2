// The open family, performed by vigil-init in the caller's view (observer/emulate.h).
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>

#include <cerrno>
#include <string>

#include "observer/caller_names.h"
#include "observer/git_rules.h"
#include "observer/caller_view.h"

namespace vigil::init::caller_view {

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
  // It is put in force for the open itself (CallerUmask), so the kernel applies it, or
  // the parent's default ACL instead, exactly as for the caller.
  bool umask_failed = false;
  auto caller_mask = [&]() -> mode_t {
    if (!creates) return 0;
    Result<mode_t> um = caller_umask(pid);
    if (!um) {
      umask_failed = true;
      out.why = um.error().message;
      return 0;
    }
    return *um;
  };
  auto open_made = [&](int dir, const char* rest, std::uint64_t f, mode_t mask,
                       std::uint64_t res) -> long {
    if (!creates) return openat2_(dir, rest, f, mode, res);
    const CallerUmask scoped(mask);
    return openat2_(dir, rest, f, mode, res);
  };
  // What the caller must be able to receive before anything changes: a slot in its fd
  // table, and a name for the target. Asked once, before the first open that may create
  // or truncate; the error the call is refused with, or 0.
  bool checked = false;
  auto before_change = [&](const std::string& name) -> int {
    if (name.empty()) return ENAMETOOLONG;
    if (checked) return 0;
    checked = true;
    return fd_room(pid);
  };
  // Unless the caller asked for O_NONBLOCK, the first try adds it: an open that would
  // wait (a FIFO with no peer) must not hold every other process's calls.
  // A change to a file that is there already, when git gives its name a meaning (a
  // config, a hook: observer/git_rules.h), is judged as its making would be; any other
  // rewrite costs a string compare. The reason, or "".
  auto judged = [&](const std::string& name) -> std::string {
    if (gate == nullptr || name.empty() || !git_may_judge_change(name)) return {};
    return (*gate)(name, std::string());
  };
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
  const bool truncates = (flags & O_TRUNC) != 0 && (flags & O_PATH) == 0;
  const bool follows_last = (flags & O_NOFOLLOW) == 0 && (flags & (O_CREAT | O_EXCL)) != (O_CREAT | O_EXCL);
  if (truncates) {
    // O_TRUNC changes the file at the open: the fd slot and the name come first.
    const std::string name = reopen ? fd_name(b.fd.get())
                             : follows_last ? followed_name(plan.target, pid, cwds)
                                            : name_in(plan.target, pid, cwds);
    if (const int err = before_change(name); err != 0) {
      if (err == ENAMETOOLONG) return unnamed(&out);
      return refused(&out, err, name);
    }
    if (std::string why = judged(name); !why.empty()) {
      out.why = std::move(why);
      return refused(&out, EACCES, name);
    }
  }
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
      const std::string name =
          follows_last ? followed_name(plan.target, pid, cwds) : name_in(plan.target, pid, cwds);
      if (name.empty()) return unnamed(&out);
      if (std::string why = (*gate)(name, std::string()); !why.empty()) {
        out.error = EACCES;
        out.why = std::move(why);
        out.resolved = name;
        return out;
      }
      if (const int err = before_change(name); err != 0) return refused(&out, err, name);
      const mode_t m = caller_mask();
      if (umask_failed) return refused(&out, EPERM, name);
      // O_EXCL added where the caller did not ask for it tells that this open made the
      // file (its identity kept, to take it back if the fd cannot be installed after
      // all); EEXIST there (a dangling symlink followed, a racing creator) opens as asked.
      fd = open_made(b.dir, b.rest.c_str(), ours | O_EXCL, m, resolve);
      out.created = fd >= 0;
      if (fd < 0 && errno == EEXIST && !excl)
        fd = open_made(b.dir, b.rest.c_str(), ours, m, resolve);
    }
  } else if (reopen) {
    // /dev/fd/N itself: reopen the caller's file through our copy of its fd (this one
    // hop through a magic link is ours, to the file the caller named).
    if ((resolve & ~RESOLVE_NO_MAGICLINKS) != 0 || (flags & O_NOFOLLOW) != 0) {
      fd = -1;
      errno = ELOOP;
    } else {
      const mode_t m = caller_mask();
      if (umask_failed) return refused(&out, EPERM, fd_name(b.fd.get()));
      fd = open_made(AT_FDCWD, self_fd(b.fd.get()).c_str(), ours, m, 0);
    }
  } else {
    const mode_t m = caller_mask();
    if (umask_failed) return refused(&out, EPERM, name_in(plan.target, pid, cwds));
    if ((flags & O_CREAT) != 0) {
      const std::string name = name_in(plan.target, pid, cwds);
      if (const int err = before_change(name); err != 0) {
        if (err == ENAMETOOLONG) return unnamed(&out);
        return refused(&out, err, name);
      }
    }
    fd = open_made(b.dir, b.rest.c_str(), ours, m, resolve);
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
    out.resolved = follows_last ? followed_name(plan.target, pid, cwds) : name_in(plan.target, pid, cwds);
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
  if (out.resolved.empty() && plan.writes) {
    // Found, not made or changed (a name checked before any change would have refused
    // first): closed again, and the caller told what the kernel says of a path that long.
    return unnamed(&out);
  }
  if (plan.writes && !out.created && !truncates) {
    // Opened, nothing written yet: refused here, the fd is closed and nothing changed.
    if (std::string why = judged(out.resolved); !why.empty()) {
      out.why = std::move(why);
      out.error = EACCES;
      return out;
    }
  }
  if (out.created) {
    struct stat st {};
    if (::fstat(opened.get(), &st) == 0) {
      out.created_dev = st.st_dev;
      out.created_ino = st.st_ino;
    } else {
      out.created = false;
    }
  }
  if (keep_after && existed) keep->opened(opened.get(), out.resolved);
  out.fd = std::move(opened);
  return out;
}

}  // namespace vigil::init::caller_view
