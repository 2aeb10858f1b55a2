#include "supervisor/launch/session_base.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

namespace vigil {

std::string shared_tmp() {
  const char* t = std::getenv("TMPDIR");
  return t != nullptr && t[0] == '/' ? std::string(t) : std::string("/tmp");
}

std::string session_base(bool* shared) {
  *shared = false;
  if (const char* xdg = std::getenv("XDG_RUNTIME_DIR"); xdg != nullptr && xdg[0] == '/') {
    struct stat st {};
    if (::stat(xdg, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid()) {
      return std::string(xdg) + "/vigil";
    }
  }
  *shared = true;
  return shared_tmp() + "/vigil-" + std::to_string(::geteuid());
}

std::string session_base_dir() {
  bool shared = false;
  return session_base(&shared);
}

}  // namespace vigil
