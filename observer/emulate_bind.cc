// bind() for the gatekeeper (observer/emulate.h): an AF_UNIX path makes a socket file, a
// name like any other, so the call is performed by vigil-init on the caller's own socket
// (fetched with pidfd_getfd: binding our copy binds theirs, one socket) with the address
// it read once, after the gate judged the name in the caller's view.
#include <fcntl.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <thread>

#include "observer/caller_names.h"
#include "observer/caller_view.h"

namespace vigil::init::caller_view {
namespace {

// Binds `sock` to `last` in the directory `dir` under the caller's umask. The kernel takes
// a path, not a directory fd, so the bind runs on a thread of its own whose cwd (and
// umask: both live in the fs_struct it unshares) are the parent's and the caller's,
// never vigil-init's: no other thread sees either change. 0 or an errno.
int bind_in(int sock, int dir, const std::string& last, mode_t mask) {
  sockaddr_un addr{};
  if (last.size() >= sizeof addr.sun_path) return ENAMETOOLONG;  // the kernel's limit too
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, last.data(), last.size());
  const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + last.size() + 1);
  int err = 0;
  std::thread t([&] {
    if (::unshare(CLONE_FS) != 0 || ::fchdir(dir) != 0) {
      err = errno;
      return;
    }
    ::umask(mask);
    if (::bind(sock, reinterpret_cast<const sockaddr*>(&addr), len) != 0) err = errno;
  });
  t.join();
  return err;
}

}  // namespace

Performed perform_bind(const CallPlan& plan, pid_t pid, const Gate* gate, CwdCache* cwds) {
  Performed out;
  int err = 0;
  UniqueFd sock = caller_fd(pid, static_cast<int>(plan.args[0]), &err);
  if (!sock) {
    out.error = reach_errno(err);
    return out;
  }
  const auto* addr = reinterpret_cast<const sockaddr*>(plan.address.data());
  const auto len = static_cast<socklen_t>(plan.address.size());
  int domain = 0;
  socklen_t dlen = sizeof domain;
  if (::getsockopt(sock.get(), SOL_SOCKET, SO_DOMAIN, &domain, &dlen) != 0) {
    out.error = errno;  // ENOTSOCK, as the kernel answers for a file
    return out;
  }
  // No name made (another family, an abstract name, autobind), or an AF_UNIX address on
  // another family's socket (which the kernel refuses): the bytes read, as they are.
  if (!plan.writes || domain != AF_UNIX) {
    done(&out, ::bind(sock.get(), len == 0 ? nullptr : addr, len));
    return out;
  }
  At to = locate(plan.target, pid, cwds);
  out.resolved = to.name();
  if (to.error != 0) {
    out.error = to.error;
    out.why = to.base.why;
    return out;
  }
  if (out.resolved.empty()) return unnamed(&out);
  if (gate != nullptr) {
    if (std::string why = (*gate)(out.resolved); !why.empty()) {
      out.why = std::move(why);
      return refused(&out, EACCES, out.resolved);
    }
  }
  Result<mode_t> mask = caller_umask(pid);
  if (!mask) {
    out.why = mask.error().message;
    return refused(&out, EPERM, out.resolved);
  }
  // The socket's address reads as the last name (getsockname), not the caller's whole
  // spelling: the kernel resolves a bind's path itself, and only a name resolved by
  // vigil-init is one the gate judged.
  out.error = bind_in(sock.get(), to.parent.get(), to.last, *mask);
  return out;
}

}  // namespace vigil::init::caller_view
