#include "supervisor/log/state_size.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>
#include <map>
#include <mutex>
#include <vector>

#include "supervisor/core/base/unique_fd.h"
#include "supervisor/log/session_log.h"
#include "supervisor/log/store_sizes.h"

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

namespace {

// A store's size, kept between calls and runs (store_sizes.h): every command asks
// (capture_budget()), and a walk of every store at each ask made each command slower as
// stores piled up. A size is reused while the directory's identity and mtime are those of
// the walk and that mtime was already kSettledNs old then, so two changes within one tick
// of the filesystem's clock cannot hide the second. (A temporary file still growing is a
// floor, as a walk's is: it is counted in full once renamed.)
constexpr std::int64_t kSettledNs = 2'000'000'000;

std::int64_t ns_of(const timespec& t) {
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

std::int64_t now_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_REALTIME, &t);  // the clock file times come from
  return ns_of(t);
}

std::mutex memo_mu;
std::map<std::string, StoreSizes> memos;  // root -> settled stores' sizes, as last saved

}  // namespace

bool store_memo_fresh(std::int64_t mtime_ns, std::int64_t walked_at_ns) {
  return walked_at_ns - mtime_ns >= kSettledNs;
}

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
  const std::lock_guard lock(memo_mu);
  auto memo = memos.find(root);
  if (memo == memos.end()) memo = memos.emplace(root, load_store_sizes(fd.get())).first;
  const StoreSizes& old = memo->second;
  StoreSizes settled;  // what stands now; stores gone since are forgotten
  std::uint64_t entries = 0;
  for (const std::string& n : names_in(fd.get())) {
    struct stat st {};
    if (::fstatat(fd.get(), n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
      continue;
    StoreSize m{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino),
                ns_of(st.st_mtim), 0};
    bool keep = false;
    if (const auto was = old.find(n); was != old.end() && was->second.dev == m.dev &&
                                      was->second.ino == m.ino && was->second.mtime_ns == m.mtime_ns) {
      m.bytes = was->second.bytes;
      keep = true;
      entries += 1;
    } else {
      const std::int64_t walked_at = now_ns();
      UniqueFd sub(::openat(fd.get(), n.c_str(), kDirFlags));
      if (!sub) continue;
      TreeSize t;
      add_tree(sub.get(), 0, &entries, &t);
      m.bytes = t.bytes;
      keep = !t.cut && store_memo_fresh(m.mtime_ns, walked_at);
    }
    if (entries > kMaxStateEntries) break;
    u.all += m.bytes;
    if (n == id || store_of_session(n, session)) u.session += m.bytes;
    if (keep) settled.emplace(n, m);
  }
  if (settled != old) {
    // A cache: a run that cannot write it walks again next time, nothing more.
    (void)save_store_sizes(fd.get(), settled);
    memo->second = std::move(settled);
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
