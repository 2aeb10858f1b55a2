#include "supervisor/command/session_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <utility>

#include "supervisor/core/base/diagnostics.h"
#include "supervisor/core/base/sha256.h"
#include "supervisor/core/base/write_all.h"
#include "supervisor/launch/sandbox_plan.h"

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

constexpr const char* kLockName = "lock";
constexpr const char* kPlaceholdersName = "placeholders";
constexpr const char* kRootLocksName = "roots";
// A manifest larger than this was not written by us: it is ignored.
constexpr std::size_t kMaxManifestBytes = 1 << 20;
// bwrap makes the placeholders within moments of the manifest being written; a file whose
// status changed later than this was touched since, and is not ours to remove.
constexpr long kPlaceholderWindowSeconds = 10;

// The placeholders a stale session listed (NUL-separated absolute paths), and when the
// list was written.
struct Manifest {
  std::vector<std::string> paths;
  long written = 0;
};

std::optional<Manifest> read_manifest(const std::string& dir) {
  UniqueFd fd(::open((dir + "/" + kPlaceholdersName).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return std::nullopt;
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<std::size_t>(st.st_size) > kMaxManifestBytes) {
    return std::nullopt;
  }
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
    if (n <= 0) return std::nullopt;
    got += static_cast<std::size_t>(n);
  }
  Manifest m;
  m.written = st.st_mtime;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\0', start);
    if (end == std::string::npos) end = text.size();
    std::string path = text.substr(start, end - start);
    if (!path.empty() && path[0] == '/') m.paths.push_back(std::move(path));
    start = end + 1;
  }
  return m;
}

// The lock of a path used as a writable root (see the header), created on first use.
UniqueFd open_root_lock(const std::string& base, std::string_view path) {
  const std::string dir = base + "/" + kRootLocksName;
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return UniqueFd();
  const std::string file = dir + "/" + sha256_hex(path).substr(0, 32);
  return UniqueFd(::open(file.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
}

// The locks of `dir` and of each of its ancestors, held exclusively; nullopt when a live
// session holds one (its root contains `dir`) or a lock cannot be had at all.
std::optional<std::vector<UniqueFd>> lock_dir_and_ancestors(const std::string& base,
                                                            std::string_view dir) {
  std::vector<UniqueFd> held;
  for (;;) {
    UniqueFd fd = open_root_lock(base, dir.empty() ? "/" : dir);
    if (!fd || ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) return std::nullopt;
    held.push_back(std::move(fd));
    if (dir.empty() || dir == "/") break;
    dir = dir.substr(0, dir.rfind('/'));
  }
  return held;
}

}  // namespace

std::size_t remove_placeholder_files(const std::string& base, const std::vector<std::string>& paths,
                                     long not_before, long not_after) {
  std::size_t kept = 0;
  for (const auto& p : paths) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) continue;
    if (!is_untouched_placeholder(p, st)) continue;
    if (st.st_ctime < not_before || st.st_ctime > not_after) continue;
    // Held while unlinking: no session can start its scan of this name meanwhile.
    const auto held = lock_dir_and_ancestors(base, std::string_view(p).substr(0, p.rfind('/')));
    if (!held) {
      ++kept;
      continue;
    }
    ::unlink(p.c_str());
  }
  return kept;
}

std::size_t sweep_stale_sessions(const std::string& base) {
  std::size_t removed = 0;
  DIR* d = ::opendir(base.c_str());
  if (d == nullptr) return 0;
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(d);
  for (const auto& name : names) {
    const std::string dir = base + "/" + name;
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid())
      continue;
    // No lock file: not a session this version made, or one still being created.
    UniqueFd lock(::open((dir + "/" + kLockName).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!lock) continue;
    // Held: the session is alive (or another vigil is sweeping it right now).
    if (::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) continue;
    if (auto m = read_manifest(dir)) {
      // Some are still relied on by a live session: the directory stays for a later sweep.
      if (remove_placeholder_files(base, m->paths, m->written - 1,
                                   m->written + kPlaceholderWindowSeconds) != 0) {
        continue;
      }
    }
    if (remove_tree(dir).ok()) ++removed;
  }
  return removed;
}

Result<SessionDir> SessionDir::create() {
  bool shared = false;
  std::string base = session_base(&shared);
  bool fresh_base = false;
  if (auto r = ensure_private_dir(base); !r) {
    struct stat st {};
    if (!shared || ::lstat(base.c_str(), &st) != 0 || st.st_uid == ::geteuid())
      return std::move(r).error();
    // Another user made our fixed name first (to block vigil, or to have us use a
    // directory they control; we do neither): this session gets a fresh private one.
    std::string templ = base + "-XXXXXX";
    if (::mkdtemp(templ.data()) == nullptr)
      return system_error("cannot create a session base dir beside " + base);
    print_warning(base + " belongs to uid " + std::to_string(st.st_uid) +
                  ", not to you (another user may have made it to block vigil); using a fresh " +
                  templ + " for this session. Set XDG_RUNTIME_DIR to a directory of your own "
                  "to avoid this");
    base = std::move(templ);
    fresh_base = true;
  }
  // Before this session's scan: a killed session's placeholders would otherwise read as
  // the user's own (empty) protected files.
  sweep_stale_sessions(base);
  std::string templ = base + "/XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr)
    return system_error("cannot create a session dir in " + base);
  SessionDir s;
  s.base_ = base;
  s.fresh_base_ = fresh_base;
  s.path_ = templ;
  s.id_ = templ.substr(templ.rfind('/') + 1);
  s.tmp_ = s.path_ + "/tmp";
  // Locked before it is named "lock": a sweep never sees this session's lock unheld.
  const std::string fresh = s.path_ + "/lock.new";
  s.lock_ =
      UniqueFd(::open(fresh.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!s.lock_) return system_error("cannot create " + fresh);
  if (::flock(s.lock_.get(), LOCK_EX) != 0) return system_error("cannot lock " + fresh);
  if (::rename(fresh.c_str(), (s.path_ + "/" + kLockName).c_str()) != 0)
    return system_error("cannot rename " + fresh);
  if (::mkdir(s.tmp_.c_str(), 0700) != 0) return system_error("cannot create " + s.tmp_);
  UniqueFd empty(::open(s.empty_file().c_str(),
                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444));
  if (!empty) return system_error("cannot create " + s.empty_file());
  return s;
}

Result<void> SessionDir::record_placeholders(const std::vector<std::string>& paths) const {
  std::string text;
  for (const auto& p : paths) {
    text += p;
    text += '\0';
  }
  const std::string file = path_ + "/" + kPlaceholdersName;
  UniqueFd fd(::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return system_error("cannot create " + file);
  return write_all(fd.get(), text, file);
}

Result<void> SessionDir::hold_roots(const std::vector<std::string>& roots) {
  for (const auto& root : roots) {
    UniqueFd fd = open_root_lock(base_, root);
    // Blocking: a remover holds it exclusively only while it unlinks.
    if (!fd || ::flock(fd.get(), LOCK_SH) != 0) {
      return system_error("cannot lock the writable root " + root + " in " + base_);
    }
    roots_.push_back(std::move(fd));
  }
  return {};
}

void SessionDir::finish(const std::vector<std::string>& placeholders) {
  roots_.clear();  // this session relies on nothing any more
  // Made moments ago by bwrap (or just before the spawn): no time window to check.
  leave_for_sweep_ = remove_placeholder_files(base_, placeholders, 0, LONG_MAX) != 0;
  // And what sessions that ended while this one ran had to leave (this one's own
  // directory is still locked, so the sweep passes it by).
  sweep_stale_sessions(base_);
}

SessionDir::SessionDir(SessionDir&& o) noexcept
    : base_(std::move(o.base_)),
      path_(std::exchange(o.path_, {})),
      tmp_(std::move(o.tmp_)),
      id_(std::move(o.id_)),
      lock_(std::move(o.lock_)),
      roots_(std::move(o.roots_)),
      leave_for_sweep_(o.leave_for_sweep_),
      fresh_base_(o.fresh_base_) {}

SessionDir::~SessionDir() {
  if (path_.empty()) return;
  // The command's temp files go now; the lock and the placeholder list stay until a sweep
  // finds no live session relying on them (the lock is released when lock_ closes).
  const std::string& doomed = leave_for_sweep_ ? tmp_ : path_;
  if (auto r = remove_tree(doomed); !r) {
    print_warning(r.error().message);
  }
  // A fresh base (the fixed one was another user's) serves this session only. Our own
  // locks go first, or they would keep it from being removed.
  if (fresh_base_ && !leave_for_sweep_) {
    roots_.clear();
    lock_.reset();
    (void)remove_tree(base_);
  }
}

}  // namespace vigil
