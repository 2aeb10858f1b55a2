#include "observer/unix_broker.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "observer/event_line.h"
#include "observer/proc_dir.h"
#include "observer/unix_rules.h"
#include "supervisor/core/events/syscall_table.h"

namespace vigil::init {
namespace {

UnixCall gone() {
  UnixCall c;
  c.step = UnixCall::Step::kGone;
  return c;
}

UnixCall answer(int error) {
  UnixCall c;
  c.error = error;
  return c;
}

int sock_option(int fd, int option, int* out) {
  socklen_t len = sizeof *out;
  return ::getsockopt(fd, SOL_SOCKET, option, out, &len) == 0 ? 0 : errno;
}

std::string fd_path(int fd) {
  char link[48], buf[PATH_MAX];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = ::readlink(link, buf, sizeof buf);
  return n > 0 && static_cast<std::size_t>(n) < sizeof buf ? std::string(buf, static_cast<std::size_t>(n))
                                                           : std::string();
}

// The listed paths as vigil-init sees them now (a listed socket made after the launch,
// or a symlinked /var/run, still matches); abstract names and paths that do not resolve
// stay as written.
std::vector<std::string> canonical_allowed(const std::vector<std::string>& allowed) {
  std::vector<std::string> out;
  out.reserve(allowed.size());
  for (const std::string& a : allowed) {
    char buf[PATH_MAX];
    const bool path = !a.empty() && a[0] == '/';
    out.push_back(path && ::realpath(a.c_str(), buf) != nullptr ? std::string(buf) : a);
  }
  return out;
}

// Opens the socket file a path names, in vigil-init's view, which is the caller's: one
// mount namespace, a relative name from the caller's cwd. No magic link is followed
// (RESOLVE_NO_MAGICLINKS): /proc/self/... would mean vigil-init's own entries here.
UnixCall open_target(const Notification& n, const std::string& name, CwdCache* cwds, UnixCall c) {
  int base = AT_FDCWD;
  UniqueFd own_cwd;
  if (name[0] != '/') {
    int err = 0;
    if (cwds != nullptr) {
      base = cwds->get(n.pid, &err);
    } else {
      char cwd[48];
      std::snprintf(cwd, sizeof cwd, "/proc/%d/cwd", static_cast<int>(n.pid));
      own_cwd.reset(::open(cwd, O_PATH | O_DIRECTORY | O_CLOEXEC));
      base = own_cwd ? own_cwd.get() : -1;
      err = errno;
    }
    if (base < 0) return answer(err == ESRCH || err == ENOENT ? ESRCH : EPERM);
  }
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_NO_MAGICLINKS;
  c.target.reset(static_cast<int>(::syscall(SYS_openat2, base, name.c_str(), &how, sizeof how)));
  if (!c.target) return answer(errno);  // ENOENT, ENOTDIR, ELOOP: the kernel's own answers
  struct stat st {};
  if (::fstat(c.target.get(), &st) != 0 || !S_ISSOCK(st.st_mode)) return answer(ECONNREFUSED);
  c.resolved = fd_path(c.target.get());
  return c;
}

UnixCall prepare_connect(const Notification& n, NotifyChannel& listener,
                         const std::vector<std::string>& allowed, CwdCache* cwds) {
  static const SocketSyscall* const row = find_socket_syscall("connect");
  const int fd = static_cast<int>(n.args[row->fd]);
  const std::uint64_t addr = n.args[row->addr];
  // addrlen is an int to the kernel: past sockaddr_storage it is EINVAL before any lookup.
  const int len = static_cast<int>(n.args[row->addrlen]);
  UniqueFd pidfd = task_pidfd(n.pid);  // the calling thread (proc_dir.h)
  if (!listener.id_valid(n.id)) return gone();  // the pidfd may name a reused pid
  if (!pidfd) return answer(ESRCH);
  UnixCall c;
  c.socket.reset(static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd.get(), fd, 0)));
  if (!c.socket) {
    if (errno == EBADF || errno == ESRCH) return answer(errno);
    // The caller made itself non-dumpable: its socket cannot be fetched, so nothing is
    // connected blind (as for the gatekeeper's calls).
    c.error = EPERM;
    c.record = true;
    c.reason = "vigil-init cannot reach the caller's socket (the process is not dumpable)";
    return c;
  }
  if (len < 0 || static_cast<std::size_t>(len) > sizeof(sockaddr_storage)) return answer(EINVAL);
  c.address.resize(static_cast<std::size_t>(len));
  if (len > 0 && listener.read(n.pid, addr, c.address.data(), c.address.size()) != len)
    return answer(EFAULT);
  if (!listener.id_valid(n.id)) return gone();  // what was read belongs to nobody now
  int family = 0, type = 0;
  if (const int err = sock_option(c.socket.get(), SO_DOMAIN, &family); err != 0) return answer(err);
  const int fl = ::fcntl(c.socket.get(), F_GETFL);
  c.blocking = fl >= 0 && (fl & O_NONBLOCK) == 0;
  c.step = UnixCall::Step::kConnect;
  if (family != AF_UNIX) return c;  // connected as asked, on the copy: no line
  if (const int err = sock_option(c.socket.get(), SO_TYPE, &type); err != 0) return answer(err);
  c.record = true;
  c.type = sock_type_name(type);
  const UnixAddress a = parse_unix_address(c.address);
  UnixRequest r{UnixRequest::Call::kConnect, family, type, a.kind, {}};
  if (a.kind == UnixAddress::Kind::kPath && (type == SOCK_STREAM || type == SOCK_SEQPACKET)) {
    c.path = a.name;
    c = open_target(n, a.name, cwds, std::move(c));
    if (c.step != UnixCall::Step::kConnect) return c;
    r.name = c.resolved;
  } else if (a.kind == UnixAddress::Kind::kPath) {
    c.path = a.name;
  } else if (a.kind == UnixAddress::Kind::kAbstract) {
    c.path = r.name = abstract_display(a.name);
  }
  // The entries as written first (the loader made them absolute and normal): a listed
  // canonical path matches without a realpath() walk per entry on every connect.
  UnixDecision d = decide_unix(r, allowed);
  if (d.verdict == UnixDecision::Verdict::kDeny && a.kind == UnixAddress::Kind::kPath)
    d = decide_unix(r, canonical_allowed(allowed));
  switch (d.verdict) {
    case UnixDecision::Verdict::kKernel:
      return answer(d.error);
    case UnixDecision::Verdict::kDeny:
      c.step = UnixCall::Step::kAnswer;
      c.error = d.error;
      c.reason = d.reason;
      c.socket.reset();
      c.target.reset();
      return c;
    case UnixDecision::Verdict::kAllow:
      break;
  }
  c.allowed = true;
  c.reason = "listed in network.allowUnixSockets";
  if (c.target) {
    // The inode decided on, by its fd: a name swapped since is never looked up again.
    sockaddr_un to{};
    to.sun_family = AF_UNIX;
    const int used = std::snprintf(to.sun_path, sizeof to.sun_path, "/proc/self/fd/%d", c.target.get());
    c.address.assign(reinterpret_cast<const char*>(&to),
                     offsetof(sockaddr_un, sun_path) + static_cast<std::size_t>(used) + 1);
  }
  return c;
}

}  // namespace

UnixCall prepare_unix_call(const Notification& n, bool is_connect, NotifyChannel& listener,
                           const std::vector<std::string>& allowed, CwdCache* cwds) {
  if (is_connect) return prepare_connect(n, listener, allowed, cwds);
  // socket(): its arguments are registers, nothing to copy; the filter sends only
  // AF_UNIX datagram and raw types here.
  UnixCall c;
  c.is_socket_call = true;
  const UnixRequest r{UnixRequest::Call::kSocket, static_cast<int>(n.args[0]),
                      static_cast<int>(n.args[1] & 0xf), UnixAddress::Kind::kPath, {}};
  const UnixDecision d = decide_unix(r, allowed);
  if (d.verdict == UnixDecision::Verdict::kAllow) return c;
  c.error = d.error;
  c.record = true;
  c.type = sock_type_name(r.type);
  c.reason = d.reason;
  return c;
}

void finish_unix_call(UnixCall c, const Notification& n, NotifyChannel& listener,
                      std::string* out, std::mutex* out_mu) {
  if (c.step == UnixCall::Step::kGone) return;
  if (c.step == UnixCall::Step::kConnect) {
    const int rc = ::connect(c.socket.get(), reinterpret_cast<const sockaddr*>(c.address.data()),
                             static_cast<socklen_t>(c.address.size()));
    c.error = rc == 0 ? 0 : errno;
  }
  // Our copies go before the answer (the caller's socket is then its own alone), and the
  // line is queued before it too: see the header.
  c.socket.reset();
  c.target.reset();
  if (c.record) {
    std::string line;
    const char* err_name = c.error == 0 ? "0" : ::strerrorname_np(c.error);
    EventLine(&line, "net.unix")
        .number("pid", n.pid)
        .bytes("syscall", c.is_socket_call ? "socket" : "connect")
        .bytes("type", c.type)
        .bytes("path", c.path)
        .bytes("resolved", c.resolved)
        .bytes("verdict", c.allowed ? "allowed" : "denied")
        .bytes("reason", c.reason)
        .bytes("result", err_name != nullptr ? err_name : std::to_string(c.error))
        .finish();
    std::unique_lock<std::mutex> lock;
    if (out_mu != nullptr) lock = std::unique_lock<std::mutex>(*out_mu);
    *out += line;
  }
  if (c.is_socket_call && c.error == 0) {
    listener.answer_continue(n.id);  // registers only: nothing the kernel reads can change
  } else {
    listener.answer(n.id, 0, c.error);
  }
}

}  // namespace vigil::init
