// The open family, performed by vigil-init in the caller's view (observer/emulate.h).
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>

#include <cerrno>
#include <optional>
#include <string>

#include "observer/caller_names.h"
#include "observer/git_rules.h"
#include "observer/caller_view.h"

namespace vigil::init::caller_view {

namespace {

// One open of the family, performed in the caller's view: the flags as the kernel would
// take them, and the steps, each one job (the checks before a change, the open itself by
// how it finds its file, what follows the open).
class OpenCall {
 public:
  OpenCall(const CallPlan& plan, pid_t pid, bool may_block, const Gate* gate, CwdCache* cwds,
           const Keep* keep)
      : plan_(plan), pid_(pid), may_block_(may_block), gate_(gate), cwds_(cwds), keep_(keep) {
    flags_ = plan.flags;
    if (plan.row->name != "openat2") {
      // open/openat/creat ignore unknown bits and, under O_PATH, every bit but three;
      // openat2 refuses both, so they are dropped here as the kernel drops them.
      flags_ &= O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND | O_NONBLOCK |
                O_DSYNC | O_ASYNC | O_DIRECT | O_LARGEFILE | O_DIRECTORY | O_NOFOLLOW |
                O_NOATIME | O_CLOEXEC | O_SYNC | O_PATH | O_TMPFILE;
      if ((flags_ & O_PATH) != 0) flags_ &= O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    }
    out_.cloexec = (flags_ & O_CLOEXEC) != 0;
    creates_ = (flags_ & O_CREAT) != 0 || (flags_ & O_TMPFILE) == O_TMPFILE;
    mode_ = plan.mode;
    if (plan.row->name != "openat2") mode_ = creates_ ? (mode_ & 07777) : 0;
    caller_nonblock_ = (flags_ & O_NONBLOCK) != 0;
    // Unless the caller asked for O_NONBLOCK, the first try adds it: an open that would
    // wait (a FIFO with no peer) must not hold every other process's calls.
    ours_ = flags_ | O_CLOEXEC | (may_block ? 0 : O_NONBLOCK);
    resolve_ = plan.resolve | RESOLVE_NO_MAGICLINKS;
    truncates_ = (flags_ & O_TRUNC) != 0 && (flags_ & O_PATH) == 0;
    follows_last_ = (flags_ & O_NOFOLLOW) == 0 &&
                    (flags_ & (O_CREAT | O_EXCL)) != (O_CREAT | O_EXCL);
  }

  Performed run();

 private:
  // The caller's umask costs a read of /proc/PID/status: only when a file is made. When
  // it cannot be read the call is refused (EPERM), never performed under a guessed mask.
  // It is put in force for the open itself (CallerUmask), so the kernel applies it, or the
  // parent's default ACL instead, exactly as for the caller.
  mode_t caller_mask() {
    if (!creates_) return 0;
    Result<mode_t> um = caller_umask(pid_);
    if (!um) {
      umask_failed_ = true;
      out_.why = um.error().message;
      return 0;
    }
    return *um;
  }
  long open_made(int dir, const char* rest, std::uint64_t f, mode_t mask, std::uint64_t res) {
    if (!creates_) return openat2_(dir, rest, f, mode_, res);
    const CallerUmask scoped(mask);
    return openat2_(dir, rest, f, mode_, res);
  }
  // What the caller must be able to receive before anything changes: a slot in its fd
  // table, and a name for the target. Asked once, before the first open that may create
  // or truncate; the error the call is refused with, or 0.
  int before_change(const std::string& name) {
    if (name.empty()) return ENAMETOOLONG;
    if (checked_) return 0;
    checked_ = true;
    return fd_room(pid_);
  }
  // A change to a file that is there already, when git gives its name a meaning (a config,
  // a hook: observer/git_rules.h), is judged as its making would be; any other rewrite
  // costs a string compare. The reason, or "".
  std::string judged(const std::string& name) const {
    if (gate_ == nullptr || name.empty() || !git_may_judge_change(name)) return {};
    return (*gate_)(name, std::string());
  }
  std::string followed_or_named() const {
    return follows_last_ ? followed_name(plan_.target, pid_, cwds_)
                         : name_in(plan_.target, pid_, cwds_);
  }
  std::optional<Performed> check_truncate();
  std::optional<Performed> open_creating();
  std::optional<Performed> open_found();
  Performed after_open(UniqueFd opened);

  const CallPlan& plan_;
  const pid_t pid_;
  const bool may_block_;
  const Gate* const gate_;
  CwdCache* const cwds_;
  const Keep* const keep_;
  Performed out_;
  std::uint64_t flags_ = 0, mode_ = 0, ours_ = 0, resolve_ = 0;
  bool creates_ = false, caller_nonblock_ = false, truncates_ = false, follows_last_ = false;
  bool umask_failed_ = false, checked_ = false;
  Base b_;
  bool reopen_ = false;
  long fd_ = -1;
  bool existed_ = false;  // the open found the name there (it created nothing)
  bool keep_after_ = false;
};

// O_TRUNC changes the file at the open: the fd slot and the name come first.
std::optional<Performed> OpenCall::check_truncate() {
  const std::string name = reopen_ ? fd_name(b_.fd.get()) : followed_or_named();
  if (const int err = before_change(name); err != 0) {
    if (err == ENAMETOOLONG) return unnamed(&out_);
    return refused(&out_, err, name);
  }
  if (std::string why = judged(name); !why.empty()) {
    out_.why = std::move(why);
    return refused(&out_, EACCES, name);
  }
  return std::nullopt;
}

// Only a name that does not exist yet is created: an existing file is opened without
// O_CREAT first (the common case, a rewrite, costs no lookup); on ENOENT the name the open
// would create, found as it would (through a final symlink unless O_NOFOLLOW or O_EXCL),
// goes to the gate first.
std::optional<Performed> OpenCall::open_creating() {
  const bool excl = (flags_ & O_EXCL) != 0;
  if (!excl) {
    fd_ = openat2_(b_.dir, b_.rest.c_str(), ours_ & ~std::uint64_t{O_CREAT}, 0, resolve_);
    existed_ = fd_ >= 0;
  }
  if (!excl && !(fd_ < 0 && errno == ENOENT)) return std::nullopt;
  const std::string name = followed_or_named();
  if (name.empty()) return unnamed(&out_);
  if (std::string why = (*gate_)(name, std::string()); !why.empty()) {
    out_.error = EACCES;
    out_.why = std::move(why);
    out_.resolved = name;
    return std::move(out_);
  }
  if (const int err = before_change(name); err != 0) return refused(&out_, err, name);
  const mode_t m = caller_mask();
  if (umask_failed_) return refused(&out_, EPERM, name);
  // O_EXCL added where the caller did not ask for it tells that this open made the file
  // (its identity kept, to take it back if the fd cannot be installed after all); EEXIST
  // there (a dangling symlink followed, a racing creator) opens as asked.
  fd_ = open_made(b_.dir, b_.rest.c_str(), ours_ | O_EXCL, m, resolve_);
  out_.created = fd_ >= 0;
  if (fd_ < 0 && errno == EEXIST && !excl)
    fd_ = open_made(b_.dir, b_.rest.c_str(), ours_, m, resolve_);
  return std::nullopt;
}

// The open of a name found as the caller spelled it (or the caller's own fd reopened).
std::optional<Performed> OpenCall::open_found() {
  if (reopen_) {
    // /dev/fd/N itself: reopen the caller's file through our copy of its fd (this one
    // hop through a magic link is ours, to the file the caller named).
    if ((resolve_ & ~RESOLVE_NO_MAGICLINKS) != 0 || (flags_ & O_NOFOLLOW) != 0) {
      fd_ = -1;
      errno = ELOOP;
      return std::nullopt;
    }
    const mode_t m = caller_mask();
    if (umask_failed_) return refused(&out_, EPERM, fd_name(b_.fd.get()));
    fd_ = open_made(AT_FDCWD, self_fd(b_.fd.get()).c_str(), ours_, m, 0);
    return std::nullopt;
  }
  const mode_t m = caller_mask();
  if (umask_failed_) return refused(&out_, EPERM, name_in(plan_.target, pid_, cwds_));
  if ((flags_ & O_CREAT) != 0) {
    const std::string name = name_in(plan_.target, pid_, cwds_);
    if (const int err = before_change(name); err != 0) {
      if (err == ENAMETOOLONG) return unnamed(&out_);
      return refused(&out_, err, name);
    }
  }
  fd_ = open_made(b_.dir, b_.rest.c_str(), ours_, m, resolve_);
  // Without O_CREAT an open only ever finds the name; with it (no gate: tests) the open
  // may have made it, and nothing it made has a pre-image.
  existed_ = fd_ >= 0 && (flags_ & O_CREAT) == 0;
  return std::nullopt;
}

Performed OpenCall::run() {
  b_ = base_of(plan_.target, pid_, cwds_);
  if (b_.error != 0) {
    out_.error = b_.error;
    out_.why = std::move(b_.why);
    return std::move(out_);
  }
  reopen_ = b_.caller_fd && b_.rest.empty();
  if (truncates_) {
    if (auto refused_early = check_truncate()) return std::move(*refused_early);
  }
  // An O_CREAT|O_EXCL open never touches an existing file. One without O_TRUNC changes
  // nothing by itself: its pre-image is taken from the fd it opens (keep->opened below),
  // when the open found the file there, before the caller can write through it.
  const bool keeps =
      keep_ != nullptr && plan_.writes && (flags_ & (O_CREAT | O_EXCL)) != (O_CREAT | O_EXCL);
  keep_after_ = keeps && !reopen_ && (flags_ & O_TRUNC) == 0;
  if (keeps && !keep_after_)
    keep_->before(reopen_ ? b_.fd.get() : b_.dir, b_.rest, resolve_, (flags_ & O_NOFOLLOW) == 0);
  auto refused_early = gate_ != nullptr && (flags_ & O_CREAT) != 0 && !reopen_ ? open_creating()
                                                                               : open_found();
  if (refused_early) return std::move(*refused_early);
  if (fd_ < 0) {
    out_.error = errno;
    // Two waits the caller asked for that our O_NONBLOCK cut short: a FIFO opened for
    // writing with no reader yet (ENXIO), and a file another process holds a lease on,
    // whose break the open must wait for (EWOULDBLOCK, up to lease-break-time). Both are
    // performed again, waiting, on a thread of their own; the caller never sees the EAGAIN
    // the kernel would not have given it.
    if (!may_block_ && !caller_nonblock_ && (out_.error == ENXIO || out_.error == EWOULDBLOCK)) {
      out_.would_block = true;
      return std::move(out_);
    }
    out_.resolved = followed_or_named();
    return std::move(out_);
  }
  return after_open(UniqueFd(static_cast<int>(fd_)));
}

// The opened fd: a wait it skipped moved to a thread, the caller's flags back, its name,
// the judge of a rewrite, and the identity of what it made.
Performed OpenCall::after_open(UniqueFd opened) {
  if (!may_block_ && !caller_nonblock_) {
    // Only a read-only open of a FIFO waits for a peer that O_NONBLOCK skipped: a FIFO
    // opened for writing with no reader failed above (ENXIO, moved to a thread), with a
    // reader it opens at once either way, and O_RDWR never waits. So only O_RDONLY opens
    // (O_CREAT or O_TRUNC on a read) pay the fstat.
    struct stat st {};
    if ((flags_ & O_ACCMODE) == O_RDONLY && ::fstat(opened.get(), &st) == 0 &&
        S_ISFIFO(st.st_mode)) {
      // Opened at once only because of O_NONBLOCK (a reader of a FIFO with no writer):
      // the caller asked to wait, so the wait happens on a thread of its own.
      out_.would_block = true;
      return std::move(out_);
    }
    if (::fcntl(opened.get(), F_SETFL, static_cast<int>(flags_ & ~std::uint64_t{O_NONBLOCK})) != 0) {
      out_.error = errno;
      return std::move(out_);
    }
  }
  out_.resolved = fd_name(opened.get());
  if (out_.resolved.empty() && plan_.writes) {
    // Found, not made or changed (a name checked before any change would have refused
    // first): closed again, and the caller told what the kernel says of a path that long.
    return unnamed(&out_);
  }
  if (plan_.writes && !out_.created && !truncates_) {
    // Opened, nothing written yet: refused here, the fd is closed and nothing changed.
    if (std::string why = judged(out_.resolved); !why.empty()) {
      out_.why = std::move(why);
      out_.error = EACCES;
      return std::move(out_);
    }
  }
  if (out_.created) {
    struct stat st {};
    if (::fstat(opened.get(), &st) == 0) {
      out_.created_dev = st.st_dev;
      out_.created_ino = st.st_ino;
    } else {
      out_.created = false;
    }
  }
  if (keep_after_ && existed_) keep_->opened(opened.get(), out_.resolved);
  out_.fd = std::move(opened);
  return std::move(out_);
}

}  // namespace

Performed perform_open(const CallPlan& plan, pid_t pid, bool may_block, const Gate* gate,
                       CwdCache* cwds, const Keep* keep) {
  OpenCall call(plan, pid, may_block, gate, cwds, keep);
  return call.run();
}

}  // namespace vigil::init::caller_view
