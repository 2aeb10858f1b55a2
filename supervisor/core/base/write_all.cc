#include "supervisor/core/base/write_all.h"

#include <unistd.h>

#include <cerrno>
#include <string>

namespace vigil {

Result<void> write_all(int fd, std::string_view data, std::string_view what) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return system_error("cannot write " + std::string(what));
    if (n == 0) {
      return make_error(Errc::kSystem, "cannot write " + std::string(what) + ": write returned 0");
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

}  // namespace vigil
