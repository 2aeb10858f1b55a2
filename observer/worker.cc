#include "observer/worker.h"

#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "filters/bpf_compile.h"
#include "supervisor/core/exit_codes.h"
#include "supervisor/core/unique_fd.h"

namespace vigil::init {
namespace {

// write(2) of a few pieces: no stdio after fork.
void say(const char* a, const char* b = "", const char* c = "") {
  for (const char* s : {"vigil: ", a, b, c, "\n"}) {
    (void)!::write(2, s, std::strlen(s));
  }
}

// Passes `fd` over a unix socket with SCM_RIGHTS. No allocation.
bool send_fd(int channel, int fd) {
  char byte = 'L';
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  return ::sendmsg(channel, &msg, MSG_NOSIGNAL) == 1;
}

}  // namespace

int run_worker(const WorkerSpec& spec) {
  // Required for unprivileged seccomp, and it means nothing the command execs can gain
  // privileges (setuid binaries, file capabilities).
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    say("cannot set no_new_privs: ", std::strerror(errno));
    return to_int(ExitCode::kSandboxSetup);
  }
  for (const sock_fprog& prog : spec.filters) {
    if (const long rc = install_raw(prog, 0); rc < 0) {
      say("cannot install a seccomp filter: ", std::strerror(static_cast<int>(-rc)));
      return to_int(ExitCode::kSandboxSetup);
    }
  }
  if (spec.notify != nullptr) {
    long listener = install_raw(*spec.notify, SECCOMP_FILTER_FLAG_NEW_LISTENER | spec.notify_flags);
    if (listener < 0 && spec.notify_flags != 0) {
      // An older kernel without the optional flag: the observer works the same.
      listener = install_raw(*spec.notify, SECCOMP_FILTER_FLAG_NEW_LISTENER);
    }
    if (listener < 0) {
      say("cannot install the observer's filter: ", std::strerror(static_cast<int>(-listener)));
      return to_int(ExitCode::kSandboxSetup);
    }
    UniqueFd fd(static_cast<int>(listener));
    if (!send_fd(spec.listener_channel, fd.get())) {
      say("cannot hand the observer its listener: ", std::strerror(errno));
      return to_int(ExitCode::kSandboxSetup);
    }
  }
  ::execvp(spec.argv[0], spec.argv);
  const int err = errno;
  if (err == ENOENT) {
    say(spec.argv[0], ": command not found");
    return to_int(ExitCode::kNotFound);
  }
  say(spec.argv[0], ": ", std::strerror(err));
  return to_int(ExitCode::kCannotExec);
}

}  // namespace vigil::init
