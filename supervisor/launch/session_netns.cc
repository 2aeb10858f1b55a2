#include "supervisor/launch/session_netns.h"

#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "supervisor/core/base/pipe.h"

namespace vigil {
namespace {

// Where the child stopped (its exit code), and what that step was.
enum Step : int {
  kUnshare = 10,
  kSetgroups,
  kUidMap,
  kGidMap,
  kLoopbackUp,
  kPortStart,
  kReadyWrite,
};

// net.ipv4.ip_unprivileged_port_start in the session's namespace: the DNS stub's port
// (observer/dns_stub.h's kDnsPort).
constexpr char kSessionPortStart[] = "53";

const char* step_text(int code) {
  switch (code) {
    case kUnshare:
      return "make the namespaces (unshare)";
    case kSetgroups:
      return "write its setgroups";
    case kUidMap:
      return "write its uid_map";
    case kGidMap:
      return "write its gid_map";
    case kLoopbackUp:
      return "bring its loopback interface up";
    case kPortStart:
      return "write its ip_unprivileged_port_start";
    default:
      return "say it was ready";
  }
}

bool write_file(const char* path, const char* text) {
  const UniqueFd fd(::open(path, O_WRONLY | O_CLOEXEC));
  if (!fd) return false;
  const auto len = static_cast<ssize_t>(std::strlen(text));
  return ::write(fd.get(), text, static_cast<std::size_t>(len)) == len;
}

bool loopback_up() {
  const UniqueFd s(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!s) return false;
  ifreq ifr{};
  std::memcpy(ifr.ifr_name, "lo", 3);
  if (::ioctl(s.get(), SIOCGIFFLAGS, &ifr) != 0) return false;
  ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP | IFF_RUNNING);
  return ::ioctl(s.get(), SIOCSIFFLAGS, &ifr) == 0;
}

// The forked child: makes the namespaces, says so on `ready`, and waits for EOF on `go`
// (the parent has opened them by then). Async-signal-safe only: the parent may have
// threads.
[[noreturn]] void make_namespaces(bool own_user, const char* uid_map, const char* gid_map,
                                  int ready, int go) {
  if (::unshare(CLONE_NEWNET | (own_user ? CLONE_NEWUSER : 0)) != 0) ::_exit(kUnshare);
  if (own_user) {
    // Only this uid and gid, each to itself: the sandbox's ids stay what they were, and
    // no other id of the host exists in it.
    if (!write_file("/proc/self/setgroups", "deny")) ::_exit(kSetgroups);
    if (!write_file("/proc/self/uid_map", uid_map)) ::_exit(kUidMap);
    if (!write_file("/proc/self/gid_map", gid_map)) ::_exit(kGidMap);
  }
  if (!loopback_up()) ::_exit(kLoopbackUp);
  // Capture's DNS stub binds each command's address at port 53 (observer/dns_stub.h):
  // lowered once here, for the whole session, where this child holds the capability,
  // instead of a child joining the namespace at every command (supervisor/launch/
  // sandbox_netns.h). With only `lo`, a low port reaches nothing new.
  if (!write_file("/proc/sys/net/ipv4/ip_unprivileged_port_start", kSessionPortStart))
    ::_exit(kPortStart);
  if (::write(ready, "1", 1) != 1) ::_exit(kReadyWrite);
  char c = 0;
  while (::read(go, &c, 1) < 0 && errno == EINTR) {
  }
  ::_exit(0);
}

int reap(pid_t child) {
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

Result<std::shared_ptr<SessionNetns>> SessionNetns::attempt(bool own_user) {
  auto ready = make_pipe();
  VIGIL_TRY(ready);
  auto go = make_pipe();
  VIGIL_TRY(go);
  const std::string uid_map =
      std::to_string(::geteuid()) + " " + std::to_string(::geteuid()) + " 1\n";
  const std::string gid_map =
      std::to_string(::getegid()) + " " + std::to_string(::getegid()) + " 1\n";
  const pid_t child = ::fork();
  if (child < 0) return system_error("fork for the session's network namespace");
  if (child == 0) {
    // Only the parent may hold the write end: its close is the child's go.
    go->write.reset();
    ready->read.reset();
    make_namespaces(own_user, uid_map.c_str(), gid_map.c_str(), ready->write.get(),
                    go->read.get());
  }
  ready->write.reset();
  go->read.reset();
  char c = 0;
  ssize_t n = 0;
  while ((n = ::read(ready->read.get(), &c, 1)) < 0 && errno == EINTR) {
  }
  std::shared_ptr<SessionNetns> ns(new SessionNetns());
  if (n == 1) {
    const std::string proc = "/proc/" + std::to_string(child) + "/ns/";
    ns->net_.reset(::open((proc + "net").c_str(), O_RDONLY | O_CLOEXEC));
    if (own_user) ns->user_.reset(::open((proc + "user").c_str(), O_RDONLY | O_CLOEXEC));
  }
  const int saved = errno;
  go->write.reset();  // the child ends: the descriptors hold the namespaces now
  const int code = reap(child);
  if (n != 1) {
    return make_error(Errc::kUnsupported,
                      std::string("cannot make the session's network namespace: could not ") +
                          step_text(code) +
                          " (run `vigil probe`: bubblewrap needs the same user namespaces)");
  }
  if (!ns->net_ || (own_user && !ns->user_))
    return system_error("open the session's network namespace", saved);
  struct stat st {};
  if (::fstat(ns->net_.get(), &st) != 0) return system_error("fstat the session's network namespace");
  ns->inode_ = st.st_ino;
  return ns;
}

std::string session_loopback_address(std::uint32_t n) {
  const std::uint32_t slot = n % (254U * 256U);
  return "127.86." + std::to_string(slot / 254U) + "." + std::to_string(slot % 254U + 1U);
}

Result<std::shared_ptr<SessionNetns>> SessionNetns::create() {
  // Root makes the namespace directly; without CAP_SYS_ADMIN (a container's root) it
  // needs a user namespace of its own, as any other user does.
  if (::geteuid() == 0) {
    auto plain = attempt(false);
    if (plain) return plain;
  }
  return attempt(true);
}

}  // namespace vigil
