#include "supervisor/launch/missing_roots.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "supervisor/core/base/unique_fd.h"
#include "supervisor/core/policy/path_expand.h"

namespace vigil {
namespace {

std::string parent_of(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == 0 ? std::string("/") : std::string(path.substr(0, slash));
}

constexpr int kDirOpen = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

}  // namespace

bool makes_missing_root(const PathRule& r, std::string_view home, unsigned uid) {
  if (r.kind != PathKind::kMissing || r.session_temp || r.first_missing_exists) return false;
  if (home.empty() || home == "/" || r.first_missing.empty()) return false;
  // The rule's paths are real (symlinks resolved): so is the home they are compared with.
  const std::string real_home = resolve_symlinks(home);
  if (real_home == "/") return false;
  // first_missing lies on the way to the entry (it is the entry or an ancestor of it).
  if (!path_is_under(r.resolved, r.first_missing)) return false;
  const std::string parent = parent_of(r.first_missing);
  if (!path_is_under(parent, real_home)) return false;
  struct stat st {};
  if (::lstat(parent.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  return st.st_uid == uid;
}

Result<void> make_missing_root(const PathRule& r) {
  const std::string parent = parent_of(r.first_missing);
  auto failed = [&](const std::string& at) -> Result<void> {
    return make_error(Errc::kSystem, r.origin + ": cannot make " + at + " (" +
                                         std::strerror(errno) + "); create it yourself (mkdir -p " +
                                         r.resolved + ")");
  };
  UniqueFd dir(::open(parent.c_str(), kDirOpen));
  if (!dir) return failed(parent);
  std::string at = parent;
  std::string_view rest = std::string_view(r.resolved).substr(parent == "/" ? 0 : parent.size());
  while (!rest.empty()) {
    while (rest.starts_with('/')) rest.remove_prefix(1);
    if (rest.empty()) break;
    const std::string name(rest.substr(0, rest.find('/')));
    rest.remove_prefix(name.size());
    at += (at == "/" ? "" : "/") + name;
    if (::mkdirat(dir.get(), name.c_str(), 0777) != 0 && errno != EEXIST) return failed(at);
    UniqueFd next(::openat(dir.get(), name.c_str(), kDirOpen));
    if (!next) return failed(at);
    dir = std::move(next);
  }
  return {};
}

}  // namespace vigil
