// find_bwrap(): which bwrap a command runs under (session_request.h).
#include "supervisor/command/session_request.h"

#include <unistd.h>

#include <cstdlib>
#include <sstream>

namespace vigil {

std::string find_bwrap(const std::optional<std::string>& configured) {
  if (configured) return ::access(configured->c_str(), X_OK) == 0 ? *configured : std::string();
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr && *path != '\0' ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty() || dir[0] != '/') continue;  // a relative PATH entry could be planted
    const std::string candidate = dir + "/bwrap";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

}  // namespace vigil
