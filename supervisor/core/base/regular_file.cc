#include "supervisor/core/base/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

namespace vigil {

Result<UniqueFd> open_regular_file(const std::string& path, std::string_view what) {
  const std::string name = std::string(what) + " " + path;
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (!fd) return system_error("cannot open " + name);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return system_error("cannot stat " + name);
  if (!S_ISREG(st.st_mode)) {
    const char* kind = S_ISFIFO(st.st_mode)   ? "a FIFO"
                       : S_ISDIR(st.st_mode)  ? "a directory"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "a device";
    return make_error(Errc::kInvalidPolicy,
                      name + " is " + kind + ", not a regular file: give the path of a file");
  }
  return fd;
}

Result<std::string> read_fd_text(int fd, std::size_t max, std::string_view what) {
  std::string text;
  char buf[65536];
  while (text.size() <= max) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return system_error("cannot read " + std::string(what));
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  if (text.size() > max + 1) text.resize(max + 1);
  return text;
}

std::string fd_path(int fd) {
#if defined(F_GETPATH)
  char path[PATH_MAX] = {};
  return ::fcntl(fd, F_GETPATH, path) == 0 && path[0] == '/' ? std::string(path) : std::string();
#else
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  std::string buf(4096, '\0');
  const ssize_t n = ::readlink(link.c_str(), buf.data(), buf.size());
  if (n <= 0 || static_cast<std::size_t>(n) >= buf.size()) return {};
  buf.resize(static_cast<std::size_t>(n));
  return buf[0] == '/' ? buf : std::string();
#endif
}

}  // namespace vigil
