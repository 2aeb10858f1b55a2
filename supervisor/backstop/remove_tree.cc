#include "supervisor/backstop/remove_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "supervisor/core/base/unique_fd.h"

namespace vigil {
namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

// A directory on the walker's way down: its identity, its name in the one above (but for
// the top), and the subdirectories still to remove.
struct Level {
  dev_t dev = 0;
  ino_t ino = 0;
  std::string name;
  bool listed = false;
  std::vector<std::string> pending;
};

// Opens the directory `name` in `parent` without following a symlink. One the command
// made unreadable or unwritable (chmod 000, 0500) is ours: it is opened up first, with
// fchmodat(AT_SYMLINK_NOFOLLOW), which never changes a symlink's target. An empty fd:
// there is no such entry (any more).
Result<UniqueFd> open_dir(int parent, const std::string& name, const std::string& shown) {
  UniqueFd fd(::openat(parent, name.c_str(), kDirFlags));
  struct stat st {};
  const bool opened = static_cast<bool>(fd);
  if (opened && ::fstat(fd.get(), &st) != 0) return system_error("cannot stat " + shown);
  if (!opened || (st.st_uid == ::geteuid() && (st.st_mode & 0700) != 0700)) {
    if (!opened && errno == ENOENT) return UniqueFd();  // gone already
    if (!opened && errno != EACCES) return system_error("cannot open " + shown);
    if (::fchmodat(parent, name.c_str(), 0700, AT_SYMLINK_NOFOLLOW) != 0)
      return system_error("cannot open up " + shown);
    fd = UniqueFd(::openat(parent, name.c_str(), kDirFlags));
    if (!fd) return system_error("cannot open " + shown);
  }
  return fd;
}

// Reads `dir` once: unlinks every entry that is not a directory and returns the names of
// the subdirectories (d_type, or an lstat where the filesystem does not fill it in).
Result<std::vector<std::string>> unlink_files(int dir, const std::function<std::string(const std::string&)>& shown) {
  UniqueFd copy(::fcntl(dir, F_DUPFD_CLOEXEC, 0));
  if (!copy) return system_error("dup");
  DIR* d = ::fdopendir(copy.get());
  if (d == nullptr) return system_error("cannot read " + shown(""));
  (void)copy.release();  // the DIR owns it now
  std::unique_ptr<DIR, int (*)(DIR*)> owned(d, ::closedir);
  std::vector<std::string> dirs;
  while (true) {
    errno = 0;
    dirent* e = ::readdir(d);
    if (e == nullptr) {
      if (errno != 0) return system_error("cannot read " + shown(""));
      break;
    }
    const std::string_view n = e->d_name;
    if (n == "." || n == "..") continue;
    bool is_dir = e->d_type == DT_DIR;
    if (e->d_type == DT_UNKNOWN) {
      struct stat st {};
      is_dir = ::fstatat(dir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
    }
    if (is_dir) {
      dirs.emplace_back(n);
    } else if (::unlinkat(dir, e->d_name, 0) != 0 && errno != ENOENT) {
      return system_error("cannot remove " + shown(std::string(n)));
    }
  }
  return dirs;
}

}  // namespace

Result<void> remove_tree(const std::string& path) {
  struct stat top {};
  if (::lstat(path.c_str(), &top) != 0) {
    if (errno == ENOENT) return {};
    return system_error("cannot stat " + path);
  }
  if (!S_ISDIR(top.st_mode)) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return system_error("cannot remove " + path);
    return {};
  }
  auto opened = open_dir(AT_FDCWD, path, path);
  VIGIL_TRY(opened);
  UniqueFd cur = std::move(opened).value();
  struct stat st {};
  if (::fstat(cur.get(), &st) != 0) return system_error("cannot stat " + path);
  const dev_t device = st.st_dev;
  // Only identities and names are kept on the way down, never descriptors: a tree
  // thousands of levels deep needs one descriptor at a time, and no path is ever built
  // (a path to the bottom would be longer than PATH_MAX).
  std::vector<Level> levels(1);
  levels[0].dev = st.st_dev;
  levels[0].ino = st.st_ino;
  const auto shown = [&](const std::string& name) {
    return path + "/<" + std::to_string(levels.size() - 1) + " levels down>/" + name;
  };
  while (true) {
    Level& here = levels.back();
    if (!here.listed) {
      auto dirs = unlink_files(cur.get(), shown);
      VIGIL_TRY(dirs);
      here.pending = std::move(dirs).value();
      here.listed = true;
    }
    if (!here.pending.empty()) {
      const std::string name = std::move(here.pending.back());
      here.pending.pop_back();
      auto child = open_dir(cur.get(), name, shown(name));
      VIGIL_TRY(child);
      if (!*child) continue;
      if (::fstat(child->get(), &st) != 0) return system_error("cannot stat " + shown(name));
      if (st.st_dev != device) {
        return make_error(Errc::kRefused, shown(name) + " is another filesystem mounted inside " +
                                              path + "; not removing it");
      }
      Level next;
      next.dev = st.st_dev;
      next.ino = st.st_ino;
      next.name = name;
      levels.push_back(std::move(next));
      cur = std::move(child).value();
      continue;
    }
    // Empty now: go up one level and remove it there.
    if (levels.size() == 1) break;
    const std::string name = std::move(levels.back().name);
    levels.pop_back();
    UniqueFd parent(::openat(cur.get(), "..", kDirFlags));
    if (!parent || ::fstat(parent.get(), &st) != 0) return system_error("cannot open " + shown(".."));
    // Nothing else should run in this tree now; if its directories moved meanwhile, ".."
    // is not where we came from, and nothing more is removed.
    if (st.st_dev != levels.back().dev || st.st_ino != levels.back().ino) {
      return make_error(Errc::kRefused,
                        path + " changed while it was being removed; stopped at " + shown(""));
    }
    if (::unlinkat(parent.get(), name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
      return system_error("cannot remove " + shown(name));
    cur = std::move(parent);
  }
  cur.reset();
  if (::rmdir(path.c_str()) != 0 && errno != ENOENT) return system_error("cannot remove " + path);
  return {};
}

}  // namespace vigil
