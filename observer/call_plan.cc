#include "observer/call_plan.h"

#include <fcntl.h>
#include <linux/btrfs.h>
#include <linux/openat2.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/time.h>
#include <utime.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstring>

namespace vigil::init {
namespace {

constexpr std::size_t kMaxArgv = 64;
constexpr std::size_t kMaxArgLen = 4096;
// All of argv, in bytes: encoded (at most 4/3, observer/event_line.h) beside a cwd of up to
// PATH_MAX it stays under the supervisor's 64 KiB line limit, so a command cannot make its
// own exec record too long to be logged.
constexpr std::size_t kMaxArgvBytes = 32 * 1024;
constexpr std::size_t kXattrNameMax = 255;       // XATTR_NAME_MAX
constexpr std::size_t kXattrSizeMax = 64 * 1024;  // XATTR_SIZE_MAX
constexpr std::int64_t kUtimeNow = (1L << 30) - 1;

// Why a read failed, as the errno the caller gets: a bad pointer is the caller's EFAULT,
// as the kernel would say; a process whose memory vigil-init may not read (it made itself
// non-dumpable) gets EPERM, and the record says why. Never a call performed unread.
int read_errno(int err) { return err == EFAULT || err == EIO ? EFAULT : EPERM; }

// A NUL-terminated string at `addr`, never asking for bytes across a page boundary in
// one read (a read that crosses into an unmapped page fails as a whole). 0 or an errno:
// ENAMETOOLONG when no NUL comes within `max` bytes, as the kernel answers.
int read_string(CallerMemory& mem, pid_t pid, std::uint64_t addr, std::string* out,
                std::size_t max) {
  out->clear();
  if (addr == 0) return EFAULT;
  constexpr std::uint64_t kPage = 4096;  // the smallest page: safe on every arch
  // Most names are short: the first read asks for this much (the copy of a whole page
  // per call is a measurable part of a trapped write), the ones after to the page's end.
  constexpr std::uint64_t kFirst = 256;
  char buf[kPage];
  while (out->size() < max) {
    const std::uint64_t to_page_end = kPage - (addr % kPage);
    const std::uint64_t chunk = out->empty() ? std::min(to_page_end, kFirst) : to_page_end;
    const std::size_t want = static_cast<std::size_t>(
        std::min<std::uint64_t>({chunk, sizeof buf, max - out->size()}));
    const long n = mem.read(pid, addr, buf, want);
    if (n <= 0) return read_errno(n < 0 ? errno : EFAULT);
    const auto* nul = static_cast<const char*>(std::memchr(buf, '\0', static_cast<size_t>(n)));
    out->append(buf, nul != nullptr ? static_cast<size_t>(nul - buf) : static_cast<size_t>(n));
    if (nul != nullptr) return 0;
    addr += static_cast<std::uint64_t>(n);
  }
  return ENAMETOOLONG;
}

int read_exact(CallerMemory& mem, pid_t pid, std::uint64_t addr, void* out, std::size_t len) {
  if (addr == 0) return EFAULT;
  const long n = mem.read(pid, addr, out, len);
  if (n == static_cast<long>(len)) return 0;
  return read_errno(n < 0 ? errno : EFAULT);
}

// bind(fd, addr, len): the address read whole, once (the kernel copies at most a
// sockaddr_storage: EINVAL past that). An AF_UNIX path (neither abstract nor autobind) is
// the call's target, cut at its first NUL within `len` as the kernel cuts it; any other
// address makes no name: performed unrecorded. 0 or the errno the caller gets.
int plan_bind(CallerMemory& mem, pid_t pid, const std::uint64_t* a, CallPlan* p) {
  const auto len = static_cast<std::int32_t>(a[2] & 0xffffffffu);  // socklen_t, an int
  if (len < 0 || static_cast<std::size_t>(len) > sizeof(sockaddr_storage)) return EINVAL;
  p->address.resize(static_cast<std::size_t>(len));
  if (len > 0) {
    if (const int err = read_exact(mem, pid, a[1], p->address.data(), p->address.size()); err != 0)
      return err;
  }
  p->writes = false;
  constexpr std::size_t kPathAt = offsetof(sockaddr_un, sun_path);
  sa_family_t family = 0;
  if (p->address.size() >= sizeof family) std::memcpy(&family, p->address.data(), sizeof family);
  if (family != AF_UNIX || p->address.size() <= kPathAt || p->address[kPathAt] == '\0') return 0;
  const std::string_view path(p->address.data() + kPathAt, p->address.size() - kPathAt);
  p->target.path = std::string(path.substr(0, path.find('\0')));
  p->target.dirfd = kCwd;
  p->writes = true;
  return 0;
}

// The trapped ioctl requests that make a name (a btrfs subvolume or snapshot: a directory
// named in a struct the kernel reads again after a CONTINUE). The gate cannot judge a
// name the kernel re-reads, so these are refused (EPERM, recorded), never continued.
bool ioctl_makes_a_name(std::uint64_t request) {
  const auto r = static_cast<std::uint32_t>(request);  // an unsigned int to the kernel
  return r == static_cast<std::uint32_t>(BTRFS_IOC_SUBVOL_CREATE) ||
         r == static_cast<std::uint32_t>(BTRFS_IOC_SUBVOL_CREATE_V2) ||
         r == static_cast<std::uint32_t>(BTRFS_IOC_SNAP_CREATE) ||
         r == static_cast<std::uint32_t>(BTRFS_IOC_SNAP_CREATE_V2);
}

bool all_digits(std::string_view s) {
  return !s.empty() && s.size() <= 9 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

MagicRoute route_magic(std::string_view path, pid_t caller) {
  MagicRoute none{MagicRoute::Kind::kNone, -1, std::string(path)};
  if (path.empty() || path[0] != '/') return none;
  // Components with where each ends, "." and empty ones skipped, ".." folded: only while
  // the walk is inside /proc or /dev, real directories in every sandbox.
  std::vector<std::string_view> stack;
  std::size_t i = 0;
  auto next = [&]() -> std::string_view {
    while (i < path.size()) {
      while (i < path.size() && path[i] == '/') ++i;
      const std::size_t start = i;
      while (i < path.size() && path[i] != '/') ++i;
      const std::string_view c = path.substr(start, i - start);
      if (!c.empty() && c != ".") return c;
    }
    return {};
  };
  auto rest_after = [&]() {
    std::size_t j = i;
    while (j < path.size() && path[j] == '/') ++j;
    return std::string(path.substr(j));
  };
  const std::string pid = std::to_string(caller);
  for (std::string_view c = next(); !c.empty(); c = next()) {
    if (c == "..") {
      if (!stack.empty()) stack.pop_back();
      continue;
    }
    stack.push_back(c);
    if (stack[0] != "proc" && stack[0] != "dev") return none;
    if (stack.size() < 2) continue;
    const std::string_view a = stack[1];
    if (stack[0] == "dev") {
      if (a == "stdin" || a == "stdout" || a == "stderr") {
        const int fd = a == "stdin" ? 0 : a == "stdout" ? 1 : 2;
        return {MagicRoute::Kind::kCallerFd, fd, rest_after()};
      }
      if (a != "fd") return none;
      const std::string_view n = next();
      if (all_digits(n)) return {MagicRoute::Kind::kCallerFd, std::stoi(std::string(n)), rest_after()};
      return none;  // /dev/fd itself, or a name in it that is not a number: ENOENT there
    }
    if (a != "self" && a != "thread-self" && a != pid) return none;
    // The caller's own /proc directory. Its fd/N and cwd are magic links into the
    // caller; every other entry is reached as /proc/<pid>/... with no magic link.
    const std::size_t after_pid = i;
    const std::string_view entry = next();
    if (entry == "cwd") return {MagicRoute::Kind::kCallerCwd, -1, rest_after()};
    if (entry == "fd") {
      const std::string_view n = next();
      if (all_digits(n)) return {MagicRoute::Kind::kCallerFd, std::stoi(std::string(n)), rest_after()};
    }
    std::string through = "/proc/" + pid;
    if (a == "thread-self") through += "/task/" + pid;
    through += std::string(path.substr(after_pid));
    return {MagicRoute::Kind::kCallerProc, -1, std::move(through)};
  }
  return none;
}

namespace {

// A read of the caller's memory that failed: the errno its call gets, and why (err 0: read).
struct ReadFail {
  int err = 0;
  const char* why = "";
};

// The fd forms, and a NULL path meaning "the fd itself" (futimens): the fd cannot change
// under the kernel, nothing to race.
void plan_on_fd(const Notification& n, const WriteSyscall* row, CallerMemory& mem, CallPlan* p) {
  const auto* a = n.args;
  p->on_fd = true;
  p->target.dirfd = static_cast<std::int32_t>(a[row->fd_only ? 0 : row->dirfd]);
  p->kind = CallPlan::Kind::kContinue;
  if (row->trap == Trap::kIoctlRequests && ioctl_makes_a_name(a[1])) {
    p->kind = mem.id_valid(n.id) ? CallPlan::Kind::kFail : CallPlan::Kind::kGone;
    p->error = EPERM;
    p->why = "a btrfs subvolume or snapshot is a name the kernel reads again after vigil-init "
             "would judge it: refused";
  }
  // The record names the fd's target, looked up in the caller's table: a caller gone
  // meanwhile (its pid perhaps reused) gets no record naming another process's file.
  if (p->kind == CallPlan::Kind::kContinue && !mem.id_valid(n.id)) p->kind = CallPlan::Kind::kGone;
}

// argv for the record; the exec itself continues (the record is checked against
// /proc/PID/exe once it has happened). A string that cannot be read ends the list.
void read_exec_argv(CallerMemory& mem, pid_t pid, std::uint64_t argv_ptr, CallPlan* p) {
  std::size_t bytes = 0;
  for (std::size_t k = 0; k < kMaxArgv && argv_ptr != 0; ++k) {
    std::uint64_t ptr = 0;
    if (read_exact(mem, pid, argv_ptr + k * 8, &ptr, sizeof ptr) != 0 || ptr == 0) break;
    std::string s;
    if (read_string(mem, pid, ptr, &s, kMaxArgLen) != 0) break;
    if (bytes + s.size() > kMaxArgvBytes) {
      p->argv_truncated = true;
      break;
    }
    bytes += s.size();
    p->argv.push_back(std::move(s));
  }
  if (p->argv.size() == kMaxArgv) p->argv_truncated = true;
}

// The times of utime, utimes, futimesat and utimensat, as utimensat's timespec[2].
ReadFail read_times(CallerMemory& mem, pid_t pid, const WriteSyscall* row, std::uint64_t tp,
                    CallPlan* p) {
  if (tp == 0) {
    p->times[1] = p->times[3] = kUtimeNow;
    return {};
  }
  if (row->name == "utime") {
    std::int64_t t[2] = {};  // struct utimbuf {actime, modtime}
    if (const int err = read_exact(mem, pid, tp, t, sizeof t); err != 0)
      return {err, "could not read the times"};
    p->times[0] = t[0];
    p->times[1] = 0;
    p->times[2] = t[1];
    p->times[3] = 0;
    return {};
  }
  if (row->name == "utimensat") {
    if (const int err = read_exact(mem, pid, tp, p->times, sizeof p->times); err != 0)
      return {err, "could not read the times"};
    return {};
  }
  std::int64_t t[4] = {};  // utimes, futimesat: struct timeval[2]
  if (const int err = read_exact(mem, pid, tp, t, sizeof t); err != 0)
    return {err, "could not read the times"};
  if (t[1] < 0 || t[1] >= 1000000 || t[3] < 0 || t[3] >= 1000000)
    return {EINVAL, "microseconds out of range"};
  p->times[0] = t[0];
  p->times[1] = t[1] * 1000;
  p->times[2] = t[2];
  p->times[3] = t[3] * 1000;
  return {};
}

// setxattr's and removexattr's name, and setxattr's value (setxattrat's through its
// struct xattr_args, read once).
ReadFail read_xattr(CallerMemory& mem, pid_t pid, const WriteSyscall* row,
                    const std::uint64_t* a, CallPlan* p) {
  const bool at_form = row->name.ends_with("at");  // setxattrat/removexattrat (6.13)
  const int name_arg = at_form ? 3 : 1;
  if (const int err = read_string(mem, pid, a[name_arg], &p->xattr_name, kXattrNameMax + 1);
      err != 0)
    return {err == ENAMETOOLONG ? ERANGE : err, "could not read the attribute's name"};
  if (row->emulation != Emulation::kSetxattr) return {};
  std::uint64_t value = a[2], size = a[3];
  if (at_form) {
    // struct xattr_args {u64 value; u32 size; u32 flags}.
    if (a[5] < 16) return {EINVAL, "xattr_args smaller than version 0"};
    std::uint64_t xa[2] = {};
    if (const int err = read_exact(mem, pid, a[4], xa, sizeof xa); err != 0)
      return {err, "could not read the xattr_args"};
    value = xa[0];
    size = xa[1] & 0xffffffffu;
    p->args[4] = xa[1] >> 32;  // its flags, where setxattr has them
  }
  if (size > kXattrSizeMax) return {E2BIG, "attribute value too large"};
  p->xattr_value.resize(size);
  if (size != 0) {
    if (const int err = read_exact(mem, pid, value, p->xattr_value.data(), size); err != 0)
      return {err, "could not read the attribute's value"};
  }
  return {};
}

// What the call's own arguments beyond its names say: argv, times, attributes. Sets the
// plan's kind.
ReadFail read_call_arguments(CallerMemory& mem, pid_t pid, const WriteSyscall* row,
                             const std::uint64_t* a, CallPlan* p) {
  p->kind = CallPlan::Kind::kPerform;
  switch (row->emulation) {
    case Emulation::kExec:
      read_exec_argv(mem, pid, a[row->path + 1], p);
      p->kind = CallPlan::Kind::kContinue;
      return {};
    case Emulation::kUtime:
      return read_times(mem, pid, row, a[row->path + 1], p);
    case Emulation::kFileSetattr: {
      // file_setattr(dfd, path, struct file_attr *, size, at_flags): the struct is passed
      // on as read (its layout grows by size; 24 bytes in version 0).
      const std::uint64_t size = a[3];
      if (size < 24 || size > 4096) return {EINVAL, "file_attr size out of range"};
      p->xattr_value.resize(size);
      if (const int err = read_exact(mem, pid, a[2], p->xattr_value.data(), size); err != 0)
        return {err, "could not read the file_attr"};
      return {};
    }
    case Emulation::kSetxattr:
    case Emulation::kRemovexattr:
      return read_xattr(mem, pid, row, a, p);
    default:
      return {};
  }
}

// The flags, mode and resolve of the call (openat2's from its struct open_how, read whole
// once), and whether an open writes.
ReadFail read_open_flags(CallerMemory& mem, pid_t pid, const WriteSyscall* row,
                         const std::uint64_t* a, CallPlan* p) {
  if (row->flags >= 0 && !row->open_how) p->flags = a[row->flags];
  if (row->at_flags >= 0) p->at_flags = a[row->at_flags] & 0xffffffffu;  // an int
  if (row->mode >= 0) p->mode = static_cast<std::uint32_t>(a[row->mode]);
  if (row->open_how) {
    // struct open_how {u64 flags, mode, resolve}.
    std::uint64_t how[3] = {};
    const std::uint64_t size = a[3];
    if (size < sizeof how) return {EINVAL, "openat2: open_how smaller than version 0"};
    if (const int err = read_exact(mem, pid, a[2], how, sizeof how); err != 0)
      return {err, "could not read the caller's open_how"};
    p->flags = how[0];
    p->mode = static_cast<std::uint32_t>(how[1]);
    p->resolve = how[2];
  }
  if (row->emulation == Emulation::kOpen) {
    if (row->name == "creat") p->flags = O_CREAT | O_WRONLY | O_TRUNC;
    const int acc = static_cast<int>(p->flags & O_ACCMODE);
    p->writes = (p->flags & O_PATH) == 0 &&
                (acc != O_RDONLY || (p->flags & (O_CREAT | O_TRUNC | O_APPEND)) != 0);
  }
  return {};
}

}  // namespace

CallPlan plan_call(const Notification& n, const WriteSyscall* row, CallerMemory& mem) {
  CallPlan p;
  p.row = row;
  std::copy(std::begin(n.args), std::end(n.args), std::begin(p.args));
  if (row == nullptr) {
    p.kind = CallPlan::Kind::kContinue;
    return p;
  }
  const pid_t pid = n.pid;
  const auto* a = n.args;
  auto fail = [&](int err, std::string why) {
    // What was read belongs to nobody if the caller has left its call.
    p.kind = mem.id_valid(n.id) ? CallPlan::Kind::kFail : CallPlan::Kind::kGone;
    p.error = err;
    p.why = err == EPERM ? "the process made itself non-dumpable (prctl PR_SET_DUMPABLE), so "
                           "vigil-init cannot read its call: refused rather than performed unseen"
                         : std::move(why);
    return p;
  };
  if (const ReadFail f = read_open_flags(mem, pid, row, a, &p); f.err != 0)
    return fail(f.err, f.why);

  // The fd forms, and a NULL path meaning "the fd itself". An empty path with
  // AT_EMPTY_PATH is also the fd itself, but its bytes are in memory and could change:
  // that one is performed.
  const bool null_path =
      row->null_path_is_fd && a[row->path] == 0 && static_cast<std::int32_t>(a[row->dirfd]) != kCwd;
  if (row->emulation == Emulation::kOnFd || null_path) {
    plan_on_fd(n, row, mem, &p);
    return p;
  }
  if (row->emulation == Emulation::kBind) {
    if (const int err = plan_bind(mem, pid, a, &p); err != 0)
      return fail(err, "could not read the socket address");
    p.kind = CallPlan::Kind::kPerform;
    return p;
  }
  auto take = [&](int dirfd_arg, int path_arg, PlannedPath* out) -> int {
    out->dirfd = dirfd_arg >= 0 ? static_cast<std::int32_t>(a[dirfd_arg]) : kCwd;
    return read_string(mem, pid, a[path_arg], &out->path, PATH_MAX);
  };
  if (row->emulation == Emulation::kSymlink) {
    // symlink(contents, name): the contents are bytes, never resolved.
    p.has_from = true;
    if (const int err = read_string(mem, pid, a[0], &p.from.path, PATH_MAX); err != 0)
      return fail(err, "could not read the symlink's contents");
  } else if (row->path2 >= 0) {
    p.has_from = true;
    if (const int err = take(row->dirfd, row->path, &p.from); err != 0)
      return fail(err, "could not read the old name");
  }
  const int target_dirfd = row->path2 >= 0 ? row->dirfd2 : row->dirfd;
  const int target_path = row->path2 >= 0 ? row->path2 : row->path;
  if (const int err = take(target_dirfd, target_path, &p.target); err != 0)
    return fail(err, "could not read the path");
  if (p.target.path.empty() && (p.at_flags & AT_EMPTY_PATH) != 0) p.on_fd = true;
  if (const ReadFail f = read_call_arguments(mem, pid, row, a, &p); f.err != 0)
    return fail(f.err, f.why);
  // Everything was read while the caller was held; once the id is checked after the last
  // read, nothing needs checking again: an id never becomes valid again. Needed where the
  // kernel runs the call or the record says what a caller did (exec, fd-based, a read
  // told): bytes read from a pid reused meanwhile would be another process's. Not for a
  // write vigil-init performs (about a microsecond, an ioctl, on every trapped write): it
  // performs exactly the bytes it read and judged, whoever's they were (every process
  // here is the same sandbox's), the record names what it did, and the caller's answer,
  // the install or the send, is what fails (ENOENT) for a caller that has left.
  const bool performed_here =
      p.kind == CallPlan::Kind::kPerform && (row->emulation != Emulation::kOpen || p.writes);
  if (!performed_here && !mem.id_valid(n.id)) p.kind = CallPlan::Kind::kGone;
  return p;
}

}  // namespace vigil::init
