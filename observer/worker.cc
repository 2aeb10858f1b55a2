#include "observer/worker.h"

#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "filters/bpf_compile.h"
#include "observer/fd_passing.h"
#include "supervisor/core/base/exit_codes.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil::init {
namespace {

// write(2) of a few pieces: no stdio after fork.
void say(const char* a, const char* b = "", const char* c = "") {
  for (const char* s : {"vigil: ", a, b, c, "\n"}) {
    (void)!::write(2, s, std::strlen(s));
  }
}

// execvp's $PATH walk, done before the observer's filter is installed: every execve
// tried on a $PATH entry that does not hold the command would be one more trapped call
// (a round trip through the observer, a read of the caller's memory), ten of them for
// `true` on a typical root $PATH. Writes the first regular executable file to `out`;
// false if there is none (or argv[0] has a slash, or a path would not fit), and the
// command is then left to execvp to find or to fail on, as before.
bool find_in_path(const char* file, char* out, std::size_t cap) {
  if (file[0] == '\0' || std::strchr(file, '/') != nullptr) return false;
  const char* path = ::getenv("PATH");
  if (path == nullptr) path = "/bin:/usr/bin";  // glibc's default (confstr _CS_PATH)
  const std::size_t flen = std::strlen(file);
  for (const char* p = path;; ++p) {
    const char* end = std::strchr(p, ':');
    if (end == nullptr) end = p + std::strlen(p);
    std::size_t dlen = static_cast<std::size_t>(end - p);
    const char* dir = p;
    if (dlen == 0) {  // an empty entry means the working directory, as in execvp
      dir = ".";
      dlen = 1;
    }
    if (dlen + 1 + flen + 1 <= cap) {
      std::memcpy(out, dir, dlen);
      out[dlen] = '/';
      std::memcpy(out + dlen + 1, file, flen + 1);
      struct stat st {};
      if (::stat(out, &st) == 0 && S_ISREG(st.st_mode) && ::access(out, X_OK) == 0) return true;
    }
    if (*end == '\0') return false;
    p = end;
  }
}

}  // namespace

int run_worker(const WorkerSpec& spec) {
  for (const WorkerSpec::Rlimit& r : spec.rlimits) {
    const rlimit lim{r.value, r.value};
    if (::setrlimit(r.resource, &lim) != 0) {
      say("cannot set a resource cap (vigil.limits): ", std::strerror(errno));
      return to_int(ExitCode::kSandboxSetup);
    }
  }
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
  // The file found is exec'd by its path through execvp, which still runs a script
  // without a #! line with /bin/sh, as execvp on the bare name would.
  char found[PATH_MAX];
  const bool have_path = find_in_path(spec.argv[0], found, sizeof found);
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
  if (have_path) {
    ::execvp(found, spec.argv);
    // Gone or changed since the walk: search again the usual way, for the usual error.
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
