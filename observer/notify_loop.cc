#include "observer/notify_loop.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "filters/kernel_seccomp.h"
#include "filters/syscall_names.h"
#include "observer/event_line.h"
#include "supervisor/core/path_expand.h"

namespace vigil::init {
namespace {

constexpr int kAtFdcwd = AT_FDCWD;
constexpr std::size_t kMaxArgv = 64;
constexpr std::size_t kMaxArgLen = 4096;
// All of argv, in bytes: encoded (at most 4/3, observer/event_line.h) beside a cwd of up to
// PATH_MAX it stays under the supervisor's 64 KiB line limit, so a command cannot make its
// own exec record too long to be logged.
constexpr std::size_t kMaxArgvBytes = 32 * 1024;

struct Row {
  const char* name;
  PathArgs args;
};

// Which arguments of each trapped call name files. Kept beside the filter table
// (filters/notify_filter.cc) it mirrors.
const Row kRows[] = {
    {"open", {.path = 0, .flags = 1}},
    {"openat", {.dirfd = 0, .path = 1, .flags = 2}},
    {"openat2", {.dirfd = 0, .path = 1, .flags = 2, .open_how = true}},
    {"creat", {.path = 0, .follows = true}},
    {"truncate", {.path = 0, .follows = true}},
    {"unlink", {.path = 0}},
    {"unlinkat", {.dirfd = 0, .path = 1}},
    {"rmdir", {.path = 0}},
    {"mkdir", {.path = 0}},
    {"mkdirat", {.dirfd = 0, .path = 1}},
    {"mknod", {.path = 0}},
    {"mknodat", {.dirfd = 0, .path = 1}},
    {"rename", {.path = 0, .path2 = 1}},
    {"renameat", {.dirfd = 0, .path = 1, .dirfd2 = 2, .path2 = 3}},
    {"renameat2", {.dirfd = 0, .path = 1, .dirfd2 = 2, .path2 = 3}},
    {"link", {.path2 = 1}},
    {"linkat", {.dirfd2 = 2, .path2 = 3}},
    {"symlink", {.path2 = 1}},
    {"symlinkat", {.dirfd2 = 1, .path2 = 2}},
    {"chmod", {.path = 0, .follows = true}},
    {"fchmod", {.fd_only = true}},
    {"fchmodat", {.dirfd = 0, .path = 1, .follows = true}},
    {"fchmodat2", {.dirfd = 0, .path = 1, .follows = true, .at_flags = 3}},
    {"chown", {.path = 0, .follows = true}},
    {"fchown", {.fd_only = true}},
    {"lchown", {.path = 0}},
    {"fchownat", {.dirfd = 0, .path = 1, .follows = true, .at_flags = 4}},
    {"utime", {.path = 0, .follows = true}},
    {"utimes", {.path = 0, .follows = true}},
    {"utimensat", {.dirfd = 0, .path = 1, .follows = true, .at_flags = 3, .null_path_is_fd = true}},
    {"futimesat", {.dirfd = 0, .path = 1, .follows = true, .null_path_is_fd = true}},
    {"setxattr", {.path = 0, .follows = true}},
    {"lsetxattr", {.path = 0}},
    {"fsetxattr", {.fd_only = true}},
    {"removexattr", {.path = 0, .follows = true}},
    {"lremovexattr", {.path = 0}},
    {"fremovexattr", {.fd_only = true}},
    {"setxattrat",
     {.dirfd = 0, .path = 1, .follows = true, .at_flags = 2, .null_path_is_fd = true}},
    {"removexattrat",
     {.dirfd = 0, .path = 1, .follows = true, .at_flags = 2, .null_path_is_fd = true}},
    {"file_setattr", {.dirfd = 0, .path = 1, .follows = true, .at_flags = 4}},
    {"ioctl", {.fd_only = true}},  // only the requests that write (filters/notify_filter.cc)
    {"execve", {.path = 0, .exec = true}},
    {"execveat", {.dirfd = 0, .path = 1, .exec = true}},
};

// Reads a NUL-terminated string from `pid` at `addr`, never asking for bytes across a page
// boundary in one call (a read that crosses into an unmapped page fails as a whole).
bool read_string(pid_t pid, std::uint64_t addr, std::string* out, std::size_t max = PATH_MAX) {
  out->clear();
  if (addr == 0) return false;
  static const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  char buf[4096];
  while (out->size() < max) {
    const std::uint64_t to_page_end = page - (addr % page);
    const std::size_t want = static_cast<std::size_t>(
        std::min<std::uint64_t>({to_page_end, sizeof buf, max - out->size()}));
    iovec local{buf, want};
    iovec remote{reinterpret_cast<void*>(addr), want};
    const ssize_t n = ::process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (n <= 0) return false;
    const auto* nul = static_cast<const char*>(std::memchr(buf, '\0', static_cast<size_t>(n)));
    out->append(buf, nul != nullptr ? static_cast<size_t>(nul - buf) : static_cast<size_t>(n));
    if (nul != nullptr) return true;
    addr += static_cast<std::uint64_t>(n);
  }
  return false;  // no NUL within PATH_MAX: not a path the kernel would accept either
}

bool read_u64(pid_t pid, std::uint64_t addr, std::uint64_t* out) {
  iovec local{out, sizeof *out};
  iovec remote{reinterpret_cast<void*>(addr), sizeof *out};
  return ::process_vm_readv(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(sizeof *out);
}

std::string read_link(const char* path) {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink(path, buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// "/proc/PID/cwd" or "/proc/PID/fd/N": magic links into the caller's own cwd or dirfd.
// A path walked through one starts from exactly where the caller's call starts, without
// first reading the directory's name (which may be stale or ambiguous). They exist only
// while the caller does, which is why every walk through one is done before the answer,
// while the caller is held in its call.
std::string caller_base(pid_t pid, std::int64_t dirfd) {
  char buf[64];
  if (dirfd == kAtFdcwd) {
    std::snprintf(buf, sizeof buf, "/proc/%d/cwd", static_cast<int>(pid));
  } else {
    std::snprintf(buf, sizeof buf, "/proc/%d/fd/%d", static_cast<int>(pid),
                  static_cast<int>(dirfd));
  }
  return buf;
}

// The directory a relative path starts from, as a name (for paths we cannot open).
std::string base_dir(pid_t pid, std::int64_t dirfd) {
  return read_link(caller_base(pid, dirfd).c_str());
}

std::string fd_name(int fd) {
  char link[32];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  return read_link(link);
}

// Field 4 of /proc/PID/stat, after the parenthesised command name (which may hold spaces
// and parentheses itself: the last ')' ends it).
long parent_of(pid_t pid) {
  char name[48];
  std::snprintf(name, sizeof name, "/proc/%d/stat", static_cast<int>(pid));
  UniqueFd fd(::open(name, O_RDONLY | O_CLOEXEC));
  if (!fd) return 0;
  char buf[512];
  const ssize_t n = ::read(fd.get(), buf, sizeof buf - 1);
  if (n <= 0) return 0;
  buf[n] = '\0';
  const char* close_paren = std::strrchr(buf, ')');
  if (close_paren == nullptr) return 0;
  char state = 0;
  long ppid = 0;
  return std::sscanf(close_paren + 1, " %c %ld", &state, &ppid) == 2 ? ppid : 0;
}

bool id_valid(int listener, std::uint64_t id) {
  return ::ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

struct Target {
  std::string as_read;  // the spelling the caller passed
  std::int64_t dirfd = kAtFdcwd;
};

bool is_relative(const Target& t) { return t.as_read.empty() || t.as_read[0] != '/'; }

struct Landing {
  std::string resolved;
  bool dir_exists = false;  // false: the call fails with ENOENT/ENOTDIR, not for the sandbox
  bool known = true;        // false: we could not see where it lands (a non-dumpable caller)
};

// readlink() into `out`; false when `path` is not a symlink (or cannot be read).
bool link_target(const char* path, std::string* out) {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink(path, buf, sizeof buf);
  if (n <= 0 || static_cast<size_t>(n) >= sizeof buf) return false;
  out->assign(buf, static_cast<size_t>(n));
  return true;
}

// Where the call lands, walked by the kernel itself in the sandbox's own view (vigil-init
// shares the caller's mount namespace), while the caller is still held in its call: the
// parent directory is opened with O_PATH (no read, no device open) through the caller's
// cwd/dirfd magic link, and /proc/self/fd names it, symlinks and ".." resolved as the
// call resolves them ("link/../x" climbs out of the link's TARGET). The last component
// is followed only where the call follows it, dangling links included (O_CREAT through a
// dangling link creates its target). A few syscalls whatever the depth, where realpath()
// costs one per component.
Landing resolve(pid_t pid, const Target& t, bool follow_last) {
  std::string walk;
  const std::string base = is_relative(t) ? caller_base(pid, t.dirfd) : std::string();
  if (!is_relative(t)) {
    walk = t.as_read;
    // /proc/self and /proc/thread-self name the caller, not vigil-init.
    for (const std::string_view self : {"/proc/self", "/proc/thread-self"}) {
      if (walk.compare(0, self.size(), self) == 0 &&
          (walk.size() == self.size() || walk[self.size()] == '/')) {
        walk.replace(0, self.size(), "/proc/" + std::to_string(pid));
        break;
      }
    }
  } else {
    walk = base + "/" + t.as_read;
  }
  // The common case, one name in the caller's cwd or dirfd (what a build or an
  // extraction mostly does): the magic link itself is the parent, so its readlink names
  // it, and a readlink through it both follows the last name and proves a dirfd is a
  // directory (ENOTDIR otherwise; a cwd always is one, so an unfollowed name in the cwd
  // needs no second look). One or two syscalls where opening the parent costs four.
  const std::string_view name = t.as_read;
  std::string hop_to;
  int hop = 0;
  if (is_relative(t) && !name.empty() && name.find('/') == std::string_view::npos && name != "." &&
      name != "..") {
    errno = 0;
    const bool look = follow_last || t.dirfd != kAtFdcwd;
    const bool is_link = look && link_target(walk.c_str(), &hop_to);
    if (is_link || errno != ENOTDIR) {
      std::string at = read_link(base.c_str());
      if (!at.empty() && at[0] == '/') {
        if (follow_last && is_link) {
          walk = hop_to[0] == '/' ? std::move(hop_to) : std::move(at) + "/" + hop_to;
          hop = 1;
        } else {
          if (at != "/") at += '/';
          at += name;
          return {std::move(at), true};
        }
      }
    }
    // Otherwise (not a directory, the caller gone): the walk below fails the same way.
  }
  for (; hop < 40; ++hop) {  // the kernel's own limit on links followed (ELOOP)
    std::string_view path = walk;
    while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
    const size_t slash = path.rfind('/');
    const std::string_view last = path.substr(slash + 1);
    if (last.empty() || last == "." || last == "..") {
      UniqueFd whole(::open(std::string(path).c_str(), O_PATH | O_CLOEXEC));
      if (!whole) break;
      return {fd_name(whole.get()), true};
    }
    const std::string parent(slash == 0 ? std::string_view("/") : path.substr(0, slash));
    UniqueFd dir(::open(parent.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!dir) break;
    std::string at = fd_name(dir.get());
    if (at.empty() || at[0] != '/') break;
    if (follow_last) {
      char target[PATH_MAX];
      const ssize_t n = ::readlinkat(dir.get(), std::string(last).c_str(), target, sizeof target);
      if (n > 0 && static_cast<size_t>(n) < sizeof target) {
        const std::string_view to(target, static_cast<size_t>(n));
        walk = to[0] == '/' ? std::string(to) : at + "/" + std::string(to);
        continue;
      }
    }
    if (at != "/") at += '/';
    at += last;
    return {std::move(at), true};
  }
  // The parent is missing (or a loop): the call fails before any mount is consulted.
  // Named by folding the spelling onto the caller's directory.
  const std::string start = is_relative(t) ? read_link(base.c_str()) : std::string();
  if (is_relative(t) && start.empty()) return {"", false, false};
  return {resolve_symlinks(lexically_normal(start + "/" + t.as_read)), false};
}

}  // namespace

Result<Observer> Observer::create(UniqueFd listener, int events_fd, std::vector<Mount> mounts,
                                  const ObserverOptions& options) {
  Observer o;
  o.listener_ = std::move(listener);
  o.events_fd_ = events_fd;
  o.mounts_ = std::move(mounts);
  o.options_ = options;
  for (const auto& row : kRows) {
    if (auto nr = native_syscall_number(row.name)) o.table_[*nr] = {row.name, row.args};
  }
  // Linux 6.6+: the kernel hands the CPU straight from the caller to us and back (no
  // trip through the scheduler to another CPU), about 9x cheaper round trips on this
  // kind of VM. On older kernels the ioctl fails and nothing changes. Off only to
  // measure what it buys ("vigil": {"observer": {"syncWakeUp": false}}).
  if (options.sync_wake_up) {
    __u64 sync_flags = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;
    o.stats_.sync_wake_up =
        ::ioctl(o.listener_.get(), SECCOMP_IOCTL_NOTIF_SET_FLAGS, sync_flags) == 0;
  }
  if (options.overflow == Overflow::kDrop)
    ::fcntl(events_fd, F_SETFL, ::fcntl(events_fd, F_GETFL) | O_NONBLOCK);
  o.buffer_.reserve(kEventBufferBytes + 8192);
  return o;
}

bool Observer::on_ready(short revents) {
  if (revents & POLLIN) {
    handle_one();
    return true;
  }
  return (revents & (POLLHUP | POLLERR | POLLNVAL)) == 0;
}

void Observer::handle_one() {
  seccomp_notif req{};
  if (::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_RECV, &req) != 0) return;  // raced away
  const pid_t pid = static_cast<pid_t>(req.pid);
  const auto it = table_.find(req.data.nr);
  const auto* a = req.data.args;
  const int listener = listener_.get();

  // Read everything we need from the caller, and walk its paths, while it is held in its
  // call; answer; then judge and queue the line. Walking before the answer costs the
  // same work (with SYNC_WAKE_UP the caller runs on this CPU after us either way) and
  // lets the walk go through the caller's own /proc entry, which is gone once a
  // short-lived caller is let go: no O_PATH copy of its cwd to open and close per call.
  const PathArgs pa = it != table_.end() ? it->second.second : PathArgs{};
  std::vector<Target> targets;
  std::uint64_t flags = 0;
  bool ok = true;
  // Every memory read is followed by an ID_VALID check before anything more is read: if
  // the caller left the syscall (killed, or its memory replaced by an exec in another
  // thread), what we read belongs to nobody. Once checked after the last read, nothing
  // needs checking again: an id never becomes valid again.
  bool checked = true;
  auto check = [&] {
    ok = ok && id_valid(listener, req.id);
    checked = true;
  };
  auto take = [&](int dirfd_arg, int path_arg) {
    if (path_arg < 0 || !ok) return;
    Target t;
    checked = false;
    if (!read_string(pid, a[path_arg], &t.as_read)) {
      ok = false;
      return;
    }
    check();
    t.dirfd = dirfd_arg >= 0 ? static_cast<std::int32_t>(a[dirfd_arg]) : kAtFdcwd;
    targets.push_back(std::move(t));
  };
  const bool on_fd = pa.fd_only || (pa.null_path_is_fd && a[pa.path] == 0 &&
                                    static_cast<std::int32_t>(a[pa.dirfd]) != kAtFdcwd);
  if (on_fd) {
    Target t;
    t.dirfd = static_cast<std::int32_t>(a[pa.fd_only ? 0 : pa.dirfd]);
    t.as_read = "fd " + std::to_string(t.dirfd);
    targets.push_back(std::move(t));
  } else {
    take(pa.dirfd, pa.path);
  }
  take(pa.dirfd2, pa.path2);
  if (pa.flags >= 0) {
    if (pa.open_how) {
      checked = false;
      ok = ok && read_u64(pid, a[pa.flags], &flags);  // open_how.flags is its first field
    } else {
      flags = a[pa.flags];
    }
  }
  std::vector<std::string> argv;
  bool argv_truncated = false;
  if (pa.exec && ok) {
    const std::uint64_t argv_ptr = a[pa.path + 1];
    std::size_t argv_bytes = 0;
    for (std::size_t i = 0; i < kMaxArgv && argv_ptr != 0; ++i) {
      std::uint64_t p = 0;
      checked = false;
      if (!read_u64(pid, argv_ptr + i * 8, &p) || p == 0) break;
      std::string s;
      if (!read_string(pid, p, &s, kMaxArgLen)) break;
      if (argv_bytes + s.size() > kMaxArgvBytes) {
        argv_truncated = true;
        break;
      }
      argv_bytes += s.size();
      argv.push_back(std::move(s));
    }
  }
  // What we read is only trustworthy if the caller is still in that very syscall.
  if (!checked) check();
  const bool valid = ok || id_valid(listener, req.id);

  // Whether the kernel follows a symlink in the last component: open by O_NOFOLLOW (and
  // never with O_CREAT|O_EXCL, which fails with EEXIST on any link, wherever it points:
  // not a write to the target, so not judged there), the *at calls by
  // AT_SYMLINK_NOFOLLOW, the rest by what the call is (chmod follows, lchown does not).
  // Judging the link where the kernel judged its target (or the other way round) gives
  // the wrong verdict for a link pointing out of the workspace.
  const std::uint64_t at_flags = pa.at_flags >= 0 ? a[pa.at_flags] : 0;  // a register
  const bool exclusive = (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL);
  const bool follow =
      pa.exec || (pa.flags >= 0 ? (flags & O_NOFOLLOW) == 0 && !exclusive
                                : pa.follows && (at_flags & AT_SYMLINK_NOFOLLOW) == 0);
  const int accmode = static_cast<int>(flags & O_ACCMODE);
  const bool writes = accmode != O_RDONLY || (flags & (O_CREAT | O_TRUNC | O_APPEND)) != 0;
  const bool logged = valid && !(pa.open_how && !writes);  // a read-only openat2: no event
  std::vector<Landing> landings;                           // one per target
  if (logged && ok) {
    landings.reserve(targets.size());
    for (const Target& t : targets) {
      // An fd target (f*xattr, futimens) is the fd's own file, named by its magic link.
      landings.push_back(on_fd ? Landing{base_dir(pid, t.dirfd), true} : resolve(pid, t, follow));
    }
  }

  seccomp_notif_resp resp{};
  resp.id = req.id;
  resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  ::ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);

  if (!valid) {
    ++stats_.vanished;
    return;
  }
  if (!logged) return;
  if (pa.exec) {
    // execvp walks $PATH: attempts on names that do not exist fail with ENOENT and ran
    // nothing, so they are not part of the process record.
    if (!ok || landings.empty()) return;
    const Landing& l = landings[0];
    if (!l.dir_exists || ::access(l.resolved.c_str(), F_OK) != 0) return;
    EventLine ev(&buffer_, "proc.exec");
    ev.number("pid", pid)
        .number("ppid", parent_of(pid))
        .bytes_array("argv", argv)
        .bytes("cwd", base_dir(pid, kAtFdcwd));
    if (argv_truncated || argv.size() == kMaxArgv) ev.boolean("truncated", true);
    ev.finish();
    queued();
    return;
  }
  // One record per call: the target written (for rename/link, the new name), and for a
  // two-name call the old name as `from`. The verdict is the worse of the two: moving a
  // file out of a read-only directory fails as surely as moving one into it.
  struct Judged {
    std::string resolved;
    const char* verdict;
    std::string reason;
  };
  auto judge = [&](std::size_t i) -> Judged {
    if (!ok || i >= landings.size()) {
      return {"", "allowed",
              "could not read the target (the call went ahead; the mount table still applies)"};
    }
    Landing& l = landings[i];
    if (on_fd) {
      if (l.resolved.empty() || l.resolved[0] != '/') return {l.resolved, "allowed", "not a path"};
    } else if (!l.known) {
      return {"", "allowed",
              "could not resolve the target (the call went ahead; the mount table still "
              "applies)"};
    }
    if (!l.dir_exists) {
      // The kernel fails this with ENOENT before any mount is consulted.
      return {
          std::move(l.resolved), "allowed",
          "its directory does not exist: the call fails with ENOENT, not because of the sandbox"};
    }
    Classified c = classify_write(mounts_, l.resolved);
    return {std::move(l.resolved), to_string(c.verdict), std::move(c.reason)};
  };
  if (targets.empty() && ok) return;
  const Target* main_target = targets.empty() ? nullptr : &targets.back();
  Judged j = judge(targets.empty() ? 0 : targets.size() - 1);
  const std::string_view name =
      it != table_.end() ? std::string_view(it->second.first) : std::string_view();
  const std::string fallback_name =
      it != table_.end() ? std::string() : syscall_name(req.data.arch, req.data.nr);
  EventLine ev(&buffer_, "fs.write");
  ev.number("pid", pid)
      .bytes("syscall", it != table_.end() ? name : std::string_view(fallback_name))
      .bytes("path", main_target != nullptr ? std::string_view(main_target->as_read) : "")
      .unsigned_number("flags", flags);
  if (targets.size() == 2) {
    Judged from = judge(0);
    ev.bytes("from", targets.front().as_read).bytes("from_resolved", from.resolved);
    if (std::string_view(from.verdict) == "denied" && std::string_view(j.verdict) != "denied") {
      j.verdict = from.verdict;
      j.reason = std::move(from.reason) + " (the source)";
    }
  }
  ev.bytes("resolved", j.resolved).bytes("verdict", j.verdict).bytes("reason", j.reason);
  ev.finish();
  queued();
}

namespace {
std::int64_t now_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}
}  // namespace

void Observer::queued() {
  ++stats_.events;
  if (oldest_ms_ < 0) oldest_ms_ = now_ms();
  if (buffer_.size() >= kEventBufferBytes) {
    ++stats_.held;
    flush();
  }
}

int Observer::flush_timeout_ms() const {
  if (buffer_.empty()) return -1;
  const std::int64_t left = oldest_ms_ + options_.flush_after_ms - now_ms();
  return left <= 0 ? 0 : static_cast<int>(left);
}

void Observer::flush() {
  oldest_ms_ = -1;
  std::size_t off = 0;
  while (off < buffer_.size() && !reader_gone_) {
    const ssize_t n = ::write(events_fd_, buffer_.data() + off, buffer_.size() - off);
    if (n > 0) {
      off += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    // EAGAIN: kDrop and the pipe is full. Anything else (EPIPE): the supervisor is gone;
    // the command still runs to completion, and from here on every line is counted lost.
    if (!(n < 0 && errno == EAGAIN)) reader_gone_ = true;
    break;
  }
  // A line cut by a short write must still be completed, or the supervisor would read
  // its head glued to the next line: its rest stays, and goes first next time (and a
  // rest still owed from an earlier cut is kept the same way).
  std::size_t keep = off;
  if (!reader_gone_ && off < buffer_.size()) {
    if (off < owed_) {
      keep = owed_;
    } else if (off > 0 && buffer_[off - 1] != '\n') {
      keep = buffer_.find('\n', off) + 1;
    }
  }
  for (std::size_t i = keep; i < buffer_.size(); ++i) stats_.dropped += buffer_[i] == '\n';
  owed_ = keep - off;
  buffer_.resize(keep);
  buffer_.erase(0, off);
  if (!buffer_.empty()) oldest_ms_ = now_ms();
}

void Observer::finish() {
  EventLine(&buffer_, "observer.stats")
      .unsigned_number("events", stats_.events)
      .unsigned_number("dropped", stats_.dropped)
      .unsigned_number("held", stats_.held)
      .finish();
  // Blocking for this last line even in kDrop: it is the count of what was lost.
  if (options_.overflow == Overflow::kDrop)
    ::fcntl(events_fd_, F_SETFL, ::fcntl(events_fd_, F_GETFL) & ~O_NONBLOCK);
  flush();
}

}  // namespace vigil::init
