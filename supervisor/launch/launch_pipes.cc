#include "supervisor/launch/launch_pipes.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>

#include "supervisor/core/base/write_all.h"

namespace vigil {

Result<Pipe> make_status_pipe() {
  auto p = make_pipe();
  VIGIL_TRY(p);
  // The read end is non-blocking: we drain it after bwrap exits.
  ::fcntl(p->read.get(), F_SETFL, O_NONBLOCK);
  return p;
}

Result<Pipe> make_event_pipe() {
  auto p = make_pipe();
  VIGIL_TRY(p);
  ::fcntl(p->read.get(), F_SETFL, O_NONBLOCK);
  // A larger pipe: fewer times the observer has to wait for us.
  ::fcntl(p->write.get(), F_SETPIPE_SZ, 1 << 20);
  return p;
}

Result<Pipe> make_program_pipe() { return make_pipe(); }

Result<Pipe> make_output_pipe() {
  auto p = make_pipe();
  VIGIL_TRY(p);
  ::fcntl(p->read.get(), F_SETFL, O_NONBLOCK);
  return p;
}

Result<UniqueFd> sealed_memfd(const std::string& data, const char* what) {
  UniqueFd fd(::memfd_create(what, MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd) return system_error("memfd_create");
  VIGIL_TRY_VOID(write_all(fd.get(), data, what));
  if (::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) !=
      0) {
    return system_error(std::string("sealing ") + what);
  }
  if (::lseek(fd.get(), 0, SEEK_SET) != 0) return system_error("lseek");
  return fd;
}

void PipeReader::read_some() {
  char chunk[65536];
  const ssize_t n = ::read(fd.get(), chunk, sizeof chunk);
  if (n > 0) {
    buf.append(chunk, static_cast<size_t>(n));
  } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
    fd.reset();
  }
}

void PipeReader::set_blocking() {
  if (fd) ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
}

}  // namespace vigil
