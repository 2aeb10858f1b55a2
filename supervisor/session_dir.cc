#include "supervisor/session_dir.h"

#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace vigil {
namespace {

Result<void> ensure_private_dir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return system_error("cannot create " + dir);
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return system_error("cannot stat " + dir);
  if (!S_ISDIR(st.st_mode)) {
    return make_error(Errc::kRefused, dir + " is not a directory (a symlink?); refusing to use it");
  }
  if (st.st_uid != ::geteuid()) {
    return make_error(Errc::kRefused, dir + " is owned by uid " + std::to_string(st.st_uid) +
                                          ", not by us; refusing to use it");
  }
  if ((st.st_mode & 077) != 0) {
    return make_error(Errc::kRefused, dir + " is open to other users (mode " +
                                          std::to_string(st.st_mode & 0777) +
                                          "); refusing to use it");
  }
  return {};
}

std::string session_base() {
  if (const char* xdg = std::getenv("XDG_RUNTIME_DIR"); xdg != nullptr && xdg[0] == '/') {
    struct stat st {};
    if (::stat(xdg, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid()) {
      return std::string(xdg) + "/vigil";
    }
  }
  return "/tmp/vigil-" + std::to_string(::geteuid());
}

int remove_entry(const char* path, const struct stat*, int type, struct FTW*) {
  if (type == FTW_DNR) {
    // The command may have left a directory it made unreadable (chmod 000): it is ours,
    // so open it up and go through it again.
    if (::chmod(path, 0700) != 0) return -1;
    return remove_tree(path).ok() ? 0 : -1;
  }
  if (type == FTW_DP) return ::rmdir(path) == 0 || errno == ENOENT ? 0 : -1;
  return ::unlink(path) == 0 || errno == ENOENT ? 0 : -1;
}

}  // namespace

Result<void> remove_tree(const std::string& path) {
  // The sandbox is gone when this runs, so nothing races us; FTW_PHYS never follows a
  // symlink the command left behind, FTW_MOUNT never leaves the filesystem.
  if (::nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) != 0 &&
      errno != ENOENT) {
    return system_error("cannot remove " + path);
  }
  return {};
}

Result<SessionDir> SessionDir::create() {
  const std::string base = session_base();
  if (auto r = ensure_private_dir(base); !r) return std::move(r).error();
  std::string templ = base + "/XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr)
    return system_error("cannot create a session dir in " + base);
  SessionDir s;
  s.path_ = templ;
  s.id_ = templ.substr(templ.rfind('/') + 1);
  s.tmp_ = s.path_ + "/tmp";
  if (::mkdir(s.tmp_.c_str(), 0700) != 0) return system_error("cannot create " + s.tmp_);
  return s;
}

SessionDir::SessionDir(SessionDir&& o) noexcept
    : path_(std::exchange(o.path_, {})), tmp_(std::move(o.tmp_)), id_(std::move(o.id_)) {}

SessionDir::~SessionDir() {
  if (path_.empty()) return;
  if (auto r = remove_tree(path_); !r) {
    std::fprintf(stderr, "vigil: warning: %s\n", r.error().message.c_str());
  }
}

}  // namespace vigil
