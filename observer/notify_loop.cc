#include "observer/notify_loop.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>

#include "filters/kernel_seccomp.h"
#include "filters/syscall_names.h"
#include "supervisor/core/path_expand.h"

namespace vigil::init {
namespace {

constexpr int kAtFdcwd = AT_FDCWD;
constexpr std::size_t kMaxArgv = 64;
constexpr std::size_t kMaxArgLen = 4096;

struct Row {
  const char* name;
  PathArgs args;
};

// Which arguments of each trapped call name files. Kept beside the filter table
// (observer/notify_filter.cc) it mirrors.
const Row kRows[] = {
    {"open", {.path = 0, .flags = 1}},
    {"openat", {.dirfd = 0, .path = 1, .flags = 2}},
    {"openat2", {.dirfd = 0, .path = 1, .flags = 2, .open_how = true}},
    {"creat", {.path = 0}},
    {"truncate", {.path = 0}},
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
    {"chmod", {.path = 0}},
    {"fchmodat", {.dirfd = 0, .path = 1}},
    {"fchmodat2", {.dirfd = 0, .path = 1}},
    {"chown", {.path = 0}},
    {"lchown", {.path = 0}},
    {"fchownat", {.dirfd = 0, .path = 1}},
    {"utime", {.path = 0}},
    {"utimes", {.path = 0}},
    {"utimensat", {.dirfd = 0, .path = 1}},
    {"futimesat", {.dirfd = 0, .path = 1}},
    {"setxattr", {.path = 0}},
    {"lsetxattr", {.path = 0}},
    {"fsetxattr", {.fd_only = true}},
    {"removexattr", {.path = 0}},
    {"lremovexattr", {.path = 0}},
    {"fremovexattr", {.fd_only = true}},
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
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] == '\0') return true;
      out->push_back(buf[i]);
    }
    addr += static_cast<std::uint64_t>(n);
  }
  return false;  // no NUL within PATH_MAX: not a path the kernel would accept either
}

bool read_u64(pid_t pid, std::uint64_t addr, std::uint64_t* out) {
  iovec local{out, sizeof *out};
  iovec remote{reinterpret_cast<void*>(addr), sizeof *out};
  return ::process_vm_readv(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(sizeof *out);
}

std::string read_link(const std::string& path) {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// The directory a relative path is resolved against: the cwd, or the dirfd's target.
std::string base_dir(pid_t pid, std::int64_t dirfd) {
  if (dirfd == kAtFdcwd) return read_link("/proc/" + std::to_string(pid) + "/cwd");
  return read_link("/proc/" + std::to_string(pid) + "/fd/" + std::to_string(dirfd));
}

// Field 4 of /proc/PID/stat, after the parenthesised command name (which may hold spaces
// and parentheses itself: the last ')' ends it).
long parent_of(pid_t pid) {
  UniqueFd fd(::open(("/proc/" + std::to_string(pid) + "/stat").c_str(), O_RDONLY | O_CLOEXEC));
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
  std::string as_read;   // the spelling the caller passed
  std::string absolute;  // joined to its base, lexically normal
};

// Symlinks resolved in the sandbox's own view (vigil-init shares the caller's mount
// namespace). The last component is followed only where the call follows it.
// `joined` is the spelling as the kernel will walk it (base + "/" + path, NOT lexically
// folded: "link/../x" climbs out of the link's TARGET, as the kernel does). realpath()
// walks it the same way; only where a component is missing do we fall back to folding.
std::string resolve(const std::string& joined, bool follow_last) {
  std::string path = joined;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const size_t slash = path.rfind('/');
  const std::string last = path.substr(slash + 1);
  if (follow_last || last == "." || last == ".." || last.empty()) {
    std::unique_ptr<char, decltype(&std::free)> r(::realpath(path.c_str(), nullptr), &std::free);
    if (r) return r.get();
  }
  const std::string parent = slash == 0 ? "/" : path.substr(0, slash);
  std::unique_ptr<char, decltype(&std::free)> rp(::realpath(parent.c_str(), nullptr), &std::free);
  if (rp) {
    const std::string p(rp.get());
    return (p == "/" ? "" : p) + "/" + last;
  }
  return resolve_symlinks(lexically_normal(path));
}

bool dir_exists(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string parent = slash == 0 ? "/" : path.substr(0, slash);
  return ::access(parent.c_str(), F_OK) == 0;
}

}  // namespace

Result<Observer> Observer::create(UniqueFd listener, int events_fd, std::vector<Mount> mounts,
                                  Overflow overflow) {
  Observer o;
  o.listener_ = std::move(listener);
  o.events_fd_ = events_fd;
  o.mounts_ = std::move(mounts);
  o.overflow_ = overflow;
  for (const auto& row : kRows) {
    if (auto nr = native_syscall_number(row.name)) o.table_[*nr] = {row.name, row.args};
  }
  // Linux 6.6+: wake the waiting caller on the same CPU when we answer, about 9x cheaper
  // round trips on this kind of VM. On older kernels the ioctl fails and nothing changes.
  __u64 sync_flags = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;
  ::ioctl(o.listener_.get(), SECCOMP_IOCTL_NOTIF_SET_FLAGS, sync_flags);
  if (overflow == Overflow::kDrop)
    ::fcntl(events_fd, F_SETFL, ::fcntl(events_fd, F_GETFL) | O_NONBLOCK);
  return o;
}

bool Observer::on_ready() {
  pollfd p{listener_.get(), POLLIN, 0};
  while (::poll(&p, 1, 0) > 0) {
    if (p.revents & (POLLHUP | POLLERR)) return false;
    handle_one();
  }
  return true;
}

void Observer::handle_one() {
  seccomp_notif req{};
  if (::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_RECV, &req) != 0) return;  // raced away
  const pid_t pid = static_cast<pid_t>(req.pid);
  const auto it = table_.find(req.data.nr);
  const auto* a = req.data.args;

  // Read everything we need from the caller while it is stopped; answer; then judge.
  std::string name =
      it != table_.end() ? it->second.first : syscall_name(req.data.arch, req.data.nr);
  PathArgs pa = it != table_.end() ? it->second.second : PathArgs{};
  std::vector<Target> targets;
  std::uint64_t flags = 0;
  bool ok = true;
  auto take = [&](int dirfd_arg, int path_arg) {
    if (path_arg < 0) return;
    Target t;
    // Every read is checked: if the caller left the syscall (killed, or its memory
    // replaced by an exec in another thread), what we read belongs to nobody.
    if (!read_string(pid, a[path_arg], &t.as_read) || !id_valid(listener_.get(), req.id)) {
      ok = false;
      return;
    }
    const std::int64_t dirfd = dirfd_arg >= 0 ? static_cast<std::int32_t>(a[dirfd_arg]) : kAtFdcwd;
    if (!t.as_read.empty() && t.as_read[0] == '/') {
      t.absolute = t.as_read;
    } else {
      const std::string base = base_dir(pid, dirfd);
      t.absolute = base.empty() ? "" : base + "/" + t.as_read;  // folded only by resolve()
    }
    targets.push_back(std::move(t));
  };
  if (pa.fd_only) {
    Target t;
    t.absolute = base_dir(pid, static_cast<std::int32_t>(a[0]));
    t.as_read = "fd " + std::to_string(static_cast<std::int32_t>(a[0]));
    targets.push_back(std::move(t));
  }
  take(pa.dirfd, pa.path);
  take(pa.dirfd2, pa.path2);
  if (pa.flags >= 0) {
    if (pa.open_how) {
      ok = ok && read_u64(pid, a[pa.flags], &flags);  // open_how.flags is its first field
    } else {
      flags = a[pa.flags];
    }
  }
  std::vector<std::string> argv;
  if (pa.exec && ok) {
    const std::uint64_t argv_ptr = a[pa.path + 1];
    for (std::size_t i = 0; i < kMaxArgv && argv_ptr != 0; ++i) {
      std::uint64_t p = 0;
      if (!read_u64(pid, argv_ptr + i * 8, &p) || p == 0) break;
      std::string s;
      if (!read_string(pid, p, &s, kMaxArgLen)) break;
      argv.push_back(std::move(s));
    }
  }
  // What we read is only trustworthy if the caller is still in that very syscall.
  const bool valid = id_valid(listener_.get(), req.id);

  seccomp_notif_resp resp{};
  resp.id = req.id;
  resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  ::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_SEND, &resp);

  if (!valid) {
    ++stats_.vanished;
    return;
  }
  if (pa.exec) {
    // execvp walks $PATH: attempts on names that do not exist fail with ENOENT and ran
    // nothing, so they are not part of the process record.
    if (targets.empty() || targets[0].absolute.empty() ||
        ::access(targets[0].absolute.c_str(), F_OK) != 0) {
      return;
    }
    nlohmann::json ev = {{"kind", "proc.exec"},
                         {"pid", pid},
                         {"ppid", parent_of(pid)},
                         {"argv", argv},
                         {"cwd", base_dir(pid, kAtFdcwd)}};
    if (argv.size() == kMaxArgv) ev["truncated"] = true;
    queue(ev.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    return;
  }
  const int accmode = static_cast<int>(flags & O_ACCMODE);
  const bool writes = accmode != O_RDONLY || (flags & (O_CREAT | O_TRUNC | O_APPEND)) != 0;
  if (pa.open_how && !writes) return;  // a read-only openat2: not a write, no event
  // One record per call: the target written (for rename/link, the new name), and for a
  // two-name call the old name as `from`. The verdict is the worse of the two: moving a
  // file out of a read-only directory fails as surely as moving one into it.
  struct Judged {
    std::string resolved, verdict, reason;
  };
  auto judge = [&](const Target& t) -> Judged {
    if (!ok || t.absolute.empty()) {
      return {"", "allowed",
              "could not read the target (the call went ahead; the mount table still applies)"};
    }
    const bool follow = pa.flags >= 0 && (flags & O_NOFOLLOW) == 0;
    const std::string resolved = resolve(t.absolute, follow);
    if (!dir_exists(resolved)) {
      // The kernel fails this with ENOENT before any mount is consulted.
      return {
          resolved, "allowed",
          "its directory does not exist: the call fails with ENOENT, not because of the sandbox"};
    }
    const Classified c = classify_write(mounts_, resolved);
    return {resolved, to_string(c.verdict), c.reason};
  };
  if (targets.empty()) return;
  const Target& main_target = targets.back();
  Judged j = judge(main_target);
  nlohmann::json ev = {{"kind", "fs.write"},
                       {"pid", pid},
                       {"syscall", name},
                       {"path", main_target.as_read},
                       {"flags", flags}};
  if (targets.size() == 2) {
    const Judged from = judge(targets.front());
    ev["from"] = targets.front().as_read;
    ev["from_resolved"] = from.resolved;
    if (from.verdict == "denied" && j.verdict != "denied") {
      j.verdict = from.verdict;
      j.reason = from.reason + " (the source)";
    }
  }
  ev["resolved"] = j.resolved;
  ev["verdict"] = j.verdict;
  ev["reason"] = j.reason;
  queue(ev.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void Observer::queue(std::string line) {
  ++stats_.events;
  buffer_ += line;
  buffer_ += '\n';
  if (buffer_.size() >= kEventBufferBytes) {
    ++stats_.held;
    flush();
  }
}

void Observer::flush() {
  std::size_t off = 0;
  while (off < buffer_.size()) {
    const ssize_t n = ::write(events_fd_, buffer_.data() + off, buffer_.size() - off);
    if (n > 0) {
      off += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN && overflow_ == Overflow::kDrop) {
      // Count whole lines that did not fit.
      for (std::size_t i = off; i < buffer_.size(); ++i) stats_.dropped += buffer_[i] == '\n';
      break;
    }
    // The supervisor is gone: the command still runs to completion; the loss is counted.
    for (std::size_t i = off; i < buffer_.size(); ++i) stats_.dropped += buffer_[i] == '\n';
    break;
  }
  buffer_.clear();
}

void Observer::finish() {
  nlohmann::json ev = {{"kind", "observer.stats"},
                       {"events", stats_.events},
                       {"dropped", stats_.dropped},
                       {"held", stats_.held}};
  buffer_ += ev.dump() + "\n";
  flush();
}

}  // namespace vigil::init
