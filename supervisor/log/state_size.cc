#include "supervisor/log/state_size.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

#include "supervisor/core/base/unique_fd.h"
#include "supervisor/log/session_log.h"

namespace vigil {
namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

std::vector<std::string> names_in(int fd) {
  std::vector<std::string> out;
  UniqueFd lister(::dup(fd));
  DIR* d = lister ? ::fdopendir(lister.get()) : nullptr;
  if (d == nullptr) return out;
  (void)lister.release();
  ::rewinddir(d);
  while (const dirent* e = ::readdir(d)) {
    const std::string_view n = e->d_name;
    if (n != "." && n != "..") out.emplace_back(n);
    if (out.size() >= kMaxStateEntries) break;
  }
  ::closedir(d);
  return out;
}

// Adds the regular files below `fd` (depth levels at most) to `t`.
void add_tree(int fd, int depth, std::uint64_t* seen, TreeSize* t) {
  for (const std::string& n : names_in(fd)) {
    if (++*seen > kMaxStateEntries) {
      t->cut = true;
      return;
    }
    struct stat st {};
    if (::fstatat(fd, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISREG(st.st_mode)) {
      t->bytes += static_cast<std::uint64_t>(st.st_size);
    } else if (S_ISDIR(st.st_mode) && depth == 0) {
      t->cut = true;
    } else if (S_ISDIR(st.st_mode)) {
      UniqueFd sub(::openat(fd, n.c_str(), kDirFlags));
      if (sub) add_tree(sub.get(), depth - 1, seen, t);
    }
  }
}

bool session_name_ok(std::string_view id) {
  return !id.empty() && id != "." && id != ".." && id.find('/') == std::string_view::npos &&
         id.find('\0') == std::string_view::npos;
}

}  // namespace

TreeSize tree_size(const std::string& dir) {
  TreeSize t;
  UniqueFd fd(::open(dir.c_str(), kDirFlags));
  if (!fd) return t;
  t.entries = names_in(fd.get()).size();
  std::uint64_t seen = 0;
  add_tree(fd.get(), kMaxStateDepth, &seen, &t);
  return t;
}

Result<StateSizes> vigil_state_sizes(const char* xdg_state_home, const char* home) {
  auto dir = vigil_state_dir(xdg_state_home, home);
  VIGIL_TRY(dir);
  StateSizes s;
  s.dir = *dir;
  s.logs = tree_size(*dir + "/sessions");
  s.captures = tree_size(*dir + "/captures");
  s.quarantine = tree_size(*dir + "/quarantine");
  return s;
}

namespace {

// A store of session `id`: its own, a command's of an agent session (<id>-<N>), or a warm
// spare's that was never handed a command (<id>-spare<K>).
bool store_of_session(std::string_view name, std::string_view id) {
  if (store_name_order(name, id) >= 0) return true;
  const std::string spare = std::string(id) + "-spare";
  return name.size() > spare.size() && name.starts_with(spare) &&
         name.find_first_not_of("0123456789", spare.size()) == std::string_view::npos;
}

Result<void> remove_one_store(int top, const std::string& root, const std::string& name) {
  UniqueFd store(::openat(top, name.c_str(), kDirFlags));
  if (!store) return errno == ENOENT ? Result<void>{} : system_error("cannot open " + root + "/" + name);
  // A store is flat (content files and packs): anything else in it is not ours to remove.
  for (const std::string& n : names_in(store.get())) {
    if (::unlinkat(store.get(), n.c_str(), 0) != 0 && errno != ENOENT)
      return system_error("cannot remove " + root + "/" + name + "/" + n);
  }
  if (::unlinkat(top, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
    return system_error("cannot remove " + root + "/" + name);
  return {};
}

}  // namespace

CaptureUsage capture_store_usage(const std::string& root, std::string_view id) {
  CaptureUsage u;
  // An agent session's command N writes <session>-<N>: the session's cap counts every
  // store of the session, not the one command's.
  std::string_view session = id;
  // (A session id ends in 12 hex digits, never in the 1 to 9 of a command number.)
  if (const auto dash = id.rfind('-'); dash != std::string_view::npos && dash > 0 &&
      store_name_order(id, id.substr(0, dash)) > 0)
    session = id.substr(0, dash);
  UniqueFd fd(::open(root.c_str(), kDirFlags));
  if (!fd) return u;
  std::uint64_t seen = 0;
  for (const std::string& n : names_in(fd.get())) {
    UniqueFd sub(::openat(fd.get(), n.c_str(), kDirFlags));
    if (!sub) continue;
    TreeSize t;
    add_tree(sub.get(), 0, &seen, &t);
    u.all += t.bytes;
    if (n == id || store_of_session(n, session)) u.session += t.bytes;
  }
  return u;
}

Result<void> remove_capture_store(const std::string& root, std::string_view id) {
  if (!session_name_ok(id)) return make_error(Errc::kRefused, "not a session id");
  UniqueFd top(::open(root.c_str(), kDirFlags));
  if (!top) return errno == ENOENT ? Result<void>{} : system_error("cannot open " + root);
  // An agent session keeps one store per command: every one goes with its log.
  for (const std::string& n : names_in(top.get())) {
    if (store_of_session(n, id)) VIGIL_TRY_VOID(remove_one_store(top.get(), root, n));
  }
  return {};
}

}  // namespace vigil
