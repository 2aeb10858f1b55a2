#include "supervisor/launch/sandbox_netns.h"

#include <fcntl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "supervisor/core/base/unique_fd.h"

namespace vigil {

Result<PortLowering> start_lowering(pid_t sandbox_pid, int port) {
  const std::string ns = "/proc/" + std::to_string(sandbox_pid) + "/ns/net";
  PortLowering l;
  l.net = UniqueFd(::open(ns.c_str(), O_RDONLY | O_CLOEXEC));
  if (!l.net) return system_error("open " + ns);
  // The user namespace that owns the network namespace (bwrap's outer one, unprivileged).
  l.owner = UniqueFd(::ioctl(l.net.get(), NS_GET_USERNS));
  if (!l.owner) return system_error("the owner of the sandbox's network namespace (NS_GET_USERNS)");
  l.value = std::to_string(port);
  const char* const sysctl = "/proc/sys/net/ipv4/ip_unprivileged_port_start";
  // The step that failed (10-13, as the child's exit codes), 0 when the value is written.
  auto write_in = [sysctl](int net, const std::string& value) {
    if (::setns(net, CLONE_NEWNET) != 0) return 11;
    const int fd = ::open(sysctl, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return 12;
    UniqueFd file(fd);
    const auto len = static_cast<ssize_t>(value.size());
    return ::write(file.get(), value.data(), value.size()) == len ? 0 : 13;
  };
  if (::geteuid() == 0) {
    // The namespace's owner is the initial user namespace (bwrap run as root makes none)
    // when it has no parent to show: nothing to join but the network namespace, which a
    // thread may. (The thread holds copies; the fd lives in `l` until the join.)
    const UniqueFd parent(::ioctl(l.owner.get(), NS_GET_PARENT));
    if (!parent && errno == EPERM) {
      l.thread_code = std::make_shared<int>(-1);
      l.thread = std::thread([code = l.thread_code, net = l.net.get(), value = l.value, write_in] {
        *code = write_in(net, value);
      });
      return l;
    }
  }
  // A process of its own: joining a user namespace needs a single-threaded caller.
  l.child = ::fork();
  if (l.child < 0) return system_error("fork");
  if (l.child == 0) {
    // Our own user namespace (root, or a namespace bwrap did not make) is EINVAL: fine.
    if (::setns(l.owner.get(), CLONE_NEWUSER) != 0 && errno != EINVAL) ::_exit(10);
    ::_exit(write_in(l.net.get(), l.value));
  }
  return l;
}

Result<void> finish_lowering(PortLowering& l) {
  int code = -1;
  if (l.thread.joinable()) {
    l.thread.join();
    code = *l.thread_code;
  } else {
    int status = 0;
    while (::waitpid(l.child, &status, 0) < 0 && errno == EINTR) {
    }
    l.child = -1;
    code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  if (code == 0) return {};
  const char* step = code == 10   ? "join the namespace's user namespace"
                     : code == 11 ? "join the network namespace"
                     : code == 12 ? "open its ip_unprivileged_port_start"
                                  : "write its ip_unprivileged_port_start";
  return make_error(Errc::kUnsupported,
                    std::string("the sandbox's DNS stub cannot start: could not ") + step +
                        "; names will not resolve inside (connections are still captured; "
                        "set vigil.network.capture to false for the old behaviour)");
}

}  // namespace vigil
