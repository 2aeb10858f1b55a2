#include "observer/worker.h"

#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "supervisor/core/exit_codes.h"

namespace vigil::init {
namespace {

// write(2) of a few pieces: no stdio after fork.
void say(const char* a, const char* b = "", const char* c = "") {
  for (const char* s : {"vigil: ", a, b, c, "\n"}) {
    (void)!::write(2, s, std::strlen(s));
  }
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
    if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
      say("cannot install a seccomp filter: ", std::strerror(errno));
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
