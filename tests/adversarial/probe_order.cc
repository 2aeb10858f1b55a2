#include "tests/adversarial/probe_order.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "supervisor/core/base/unique_fd.h"

namespace {

// One write-open (trapped: vigil-init performs it and installs the fd), written to and
// closed: the command's own close ends its only open of the file, as far as it can tell.
int write_and_close(const char* file, bool lock_flock, bool lock_ofd, mode_t mode) {
  vigil::UniqueFd fd(::open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode));
  if (!fd) return errno;
  int err = 0;
  if (lock_flock && ::flock(fd.get(), LOCK_EX) != 0) err = errno;
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  if (err == 0 && lock_ofd && ::fcntl(fd.get(), F_OFD_SETLKW, &fl) != 0) err = errno;
  static const char kScript[] = "#!/bin/true\n";
  if (err == 0 && ::write(fd.get(), kScript, sizeof kScript - 1) < 0) err = errno;
  fd.reset();  // the command's only fd of the file: closed here
  return err;
}

// The check right after: 0 when it held, else the errno it failed with.
int check(const std::string& op, const char* file) {
  if (op == "order-exec") {
    // The file is a script for /bin/true: an exec fails ETXTBSY while any writer of it is
    // open anywhere.
    const pid_t child = ::fork();
    if (child < 0) return errno;
    if (child == 0) {
      char* const argv[] = {const_cast<char*>(file), nullptr};
      ::execve(file, argv, environ);
      ::_exit(100 + (errno & 0x7f));
    }
    int status = 0;
    if (::waitpid(child, &status, 0) != child) return errno;
    if (!WIFEXITED(status)) return EINTR;
    return WEXITSTATUS(status) >= 100 ? WEXITSTATUS(status) - 100 : 0;
  }
  // A new open, read-only (never trapped), then the lock or lease on it.
  const vigil::UniqueFd fd(::open(file, O_RDONLY | O_CLOEXEC));
  if (!fd) return errno;
  int err = 0;
  if (op == "order-flock") {
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) err = errno;
  } else if (op == "order-ofd") {
    struct flock fl {};
    fl.l_type = F_RDLCK;
    fl.l_whence = SEEK_SET;
    if (::fcntl(fd.get(), F_OFD_SETLK, &fl) != 0) err = errno;
  } else if (::fcntl(fd.get(), F_SETLEASE, F_RDLCK) != 0) {
    err = errno;  // order-lease: refused while another open for writing exists
  } else {
    ::fcntl(fd.get(), F_SETLEASE, F_UNLCK);
  }
  return err;
}

}  // namespace

int order_probe(const char* op_text, const char* file, long rounds) {
  const std::string op = op_text;
  if (op != "order-flock" && op != "order-ofd" && op != "order-lease" && op != "order-exec")
    return -1;
  long fails = 0, first_round = -1;
  int first_err = 0;
  for (long r = 0; r < rounds; ++r) {
    const int werr = write_and_close(file, op == "order-flock", op == "order-ofd", 0755);
    if (werr != 0) {
      std::printf("setup failed: errno:%s at round %ld\n", strerrorname_np(werr), r);
      return 0;
    }
    const int err = check(op, file);
    if (err == 0) continue;
    if (fails++ == 0) {
      first_err = err;
      first_round = r;
    }
  }
  if (fails == 0) {
    std::printf("ok %ld\n", rounds);
  } else {
    std::printf("fails %ld of %ld, first errno:%s at round %ld\n", fails, rounds,
                strerrorname_np(first_err), first_round);
  }
  return 0;
}
