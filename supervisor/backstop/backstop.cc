#include "supervisor/backstop/backstop.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <optional>
#include <utility>

#include "supervisor/core/fs/git_dir.h"
#include "supervisor/core/policy/git_safety.h"
#include "supervisor/core/policy/mandatory_denies.h"
#include "supervisor/core/policy/path_expand.h"
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/backstop/backstop_fs.h"
#include "supervisor/backstop/backstop_repo.h"

namespace vigil {
namespace {

using namespace backstop_fs;
using backstop_repo::joined;
using backstop_repo::kMaxConfig;
using backstop_repo::open_commondir;

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
constexpr std::size_t kMaxGitFile = 4096;

bool is_git_rule(const MandatoryDeny& d) { return d.relpath.starts_with(".git/"); }

class Walk {
 public:
  Walk(const BackstopInputs& in, const BackstopSnapshot& snap, const BackstopLimits& lim)
      : in_(in), snap_(snap), lim_(lim), deadline_(std::chrono::steady_clock::now() + lim.budget) {}

  void root(const std::string& root) {
    UniqueFd fd(::open(root.c_str(), kDirFlags & ~O_NOFOLLOW));
    if (!fd) return incomplete("cannot open " + root);
    tree(std::move(fd), root);
  }

  // One path the records name, wherever it lies: each component from the root is looked
  // at as the walk would (once), without descending.
  void written(const std::string& root, const std::string& path) {
    if (!path_is_under(path, root) || path.size() <= root.size()) return;
    UniqueFd cur(::open(root.c_str(), kDirFlags & ~O_NOFOLLOW));
    std::string at = root, rel;
    std::string_view rest = std::string_view(path).substr(root.size());
    while (cur && !rest.empty()) {
      while (rest.starts_with('/')) rest.remove_prefix(1);
      const std::string name(rest.substr(0, rest.find('/')));
      rest.remove_prefix(name.size());
      if (name.empty()) break;
      const std::string here = join(at, name);
      rel = rel.empty() ? name : rel + "/" + name;
      if (checked_.insert(here).second) {
        if (is_git_dir(cur.get(), at)) git_dir(cur.get(), at);
        if (!entry(cur.get(), at, rel, name, /*descend=*/nullptr)) return;  // an offender
      }
      cur = UniqueFd(::openat(cur.get(), name.c_str(), kDirFlags));
      at = here;
    }
    if (cur && checked_.insert(at + "/").second && is_git_dir(cur.get(), at)) {
      git_dir(cur.get(), at);
    }
  }

  BackstopFindings finish() && {
    auto& o = out_.offenders;
    std::sort(o.begin(), o.end(), [](const Offender& a, const Offender& b) { return a.path < b.path; });
    // One move takes a directory with everything in it.
    std::vector<Offender> kept;
    for (auto& x : o) {
      if (!kept.empty() && (kept.back().path == x.path || path_is_under(x.path, kept.back().path)))
        continue;
      kept.push_back(std::move(x));
    }
    o = std::move(kept);
    return std::move(out_);
  }

 private:
  void incomplete(std::string why) {
    if (out_.incomplete.empty()) out_.incomplete = std::move(why);
  }
  bool over_budget() {
    if (++out_.entries > lim_.max_entries) {
      incomplete("stopped after " + std::to_string(lim_.max_entries) + " entries");
      return true;
    }
    if ((out_.entries & 255) == 0 && std::chrono::steady_clock::now() > deadline_) {
      incomplete("stopped after " + std::to_string(lim_.budget.count()) + " ms");
      stopped_ = true;
    }
    return stopped_;
  }
  void offend(std::string path, std::string rule, std::string reason,
              std::vector<std::string> keys = {}) {
    if (in_.skip.count(path) != 0) return;
    out_.offenders.push_back(
        Offender{std::move(path), std::move(rule), std::move(reason), std::move(keys)});
  }

  // A directory git would take for a repository (supervisor/core/fs/git_dir.h: a HEAD git
  // accepts, symlinked or not, and searchable objects/ and refs/ in its common
  // directory). ".git" directories count always.
  static bool is_git_dir(int fd, const std::string& path) {
    return path.ends_with("/.git") || git::is_git_directory(fd);
  }

  // One directory being walked: its listing and where the walk is in it. Only the
  // innermost kHeldFds frames hold their fd (a walk to any depth must not run out of
  // descriptors); an outer one is opened again through its child's "..", and must be the
  // same directory (nothing runs in the sandbox any more, so nothing moves it).
  struct Frame {
    UniqueFd fd;
    dev_t dev = 0;
    ino_t ino = 0;
    std::vector<DirEntry> entries;
    std::size_t next = 0;
    std::size_t path_len = 0, rel_len = 0;
    bool git = false;
  };
  static constexpr std::size_t kHeldFds = 64;

  bool push(std::vector<Frame>& stack, UniqueFd fd) {
    Frame f;
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return false;
    f.dev = st.st_dev;
    f.ino = st.st_ino;
    f.entries = list_dir(fd.get());
    f.git = looks_like_git_dir(f.entries, path_) && is_git_dir(fd.get(), path_);
    if (f.git) git_dir(fd.get(), path_);
    f.path_len = path_.size();
    f.rel_len = rel_.size();
    f.fd = std::move(fd);
    stack.push_back(std::move(f));
    if (stack.size() > kHeldFds) stack[stack.size() - kHeldFds - 1].fd.reset();
    return true;
  }

  // Leaves the innermost directory; false when its parent cannot be opened again.
  bool pop(std::vector<Frame>& stack) {
    UniqueFd child = std::move(stack.back().fd);
    stack.pop_back();
    if (stack.empty() || stack.back().fd) return true;
    Frame& up = stack.back();
    up.fd = UniqueFd(::openat(child.get(), "..", kDirFlags));
    struct stat st {};
    if (!up.fd || ::fstat(up.fd.get(), &st) != 0 || st.st_dev != up.dev || st.st_ino != up.ino) {
      incomplete("a directory moved during the check");
      return false;
    }
    return true;
  }

  // The walk itself: depth-first, to any depth, bounded by entries and time.
  void tree(UniqueFd top, const std::string& root) {
    path_ = root;
    rel_.clear();
    std::vector<Frame> stack;
    if (!push(stack, std::move(top))) return incomplete("cannot read " + root);
    while (!stack.empty() && !stopped_) {
      Frame& f = stack.back();
      path_.resize(f.path_len);
      rel_.resize(f.rel_len);
      if (f.next == f.entries.size()) {
        if (!pop(stack)) return;
        continue;
      }
      if (over_budget()) return;
      const DirEntry& e = f.entries[f.next++];
      if (!rel_.empty()) rel_.push_back('/');
      rel_.append(e.name);
      bool descend = e.type == DT_DIR;
      // Most entries need no more than their listing: a name no rule covers, of a type
      // the listing gave. Only the others pay for a statx.
      const bool judge = e.type == DT_UNKNOWN || e.name == ".git" || e.name == ".gitmodules" ||
                         is_mandatory_deny_head(e.name) ||
                         mandatory_deny_within(rel_, /*allow_git_config=*/true) != nullptr;
      if (judge) {
        const std::string dir_path = path_;
        if (!entry(f.fd.get(), dir_path, rel_, e.name, &descend) || !descend) continue;
      }
      if (!descend) continue;
      // objects/ is most of a repository and holds nothing git runs.
      if (f.git && e.name == "objects") continue;
      UniqueFd child(::openat(f.fd.get(), e.name.c_str(), kDirFlags));
      if (!child) {
        if (errno == EACCES || errno == EPERM) incomplete("cannot read " + join(path_, e.name));
        continue;
      }
      if (path_.empty() || path_.back() != '/') path_.push_back('/');
      path_.append(e.name);
      if (!push(stack, std::move(child))) incomplete("cannot read " + path_);
    }
  }

  // From the listing alone: could this be a repository? (is_git_dir() then checks.)
  static bool looks_like_git_dir(const std::vector<DirEntry>& entries, const std::string& path) {
    if (path.ends_with("/.git")) return true;
    bool head = false, objects = false, refs = false, common = false;
    for (const auto& e : entries) {
      head = head || e.name == "HEAD";
      objects = objects || e.name == "objects";
      refs = refs || e.name == "refs";
      common = common || e.name == "commondir";
    }
    return head && (common || (objects && refs));
  }

  bool marked(const std::string& path, std::size_t floor) const {
    return backstop_repo::marked(in_, path, floor);
  }
  bool marked(const std::string& path) const { return marked(path, path.size()); }
  void repo_state(int fd, const std::string& path, std::vector<Offender>& out,
                  bool all = true) const {
    backstop_repo::repo_state(in_, snap_, fd, path, out, all);
  }

  // Where in `path` the protected name `relpath` begins (its last whole-component
  // occurrence); path.size() when it is not there.
  static std::size_t name_start(const std::string& path, std::string_view relpath) {
    for (std::size_t at = path.rfind(relpath); at != std::string::npos && at > 0;
         at = path.rfind(relpath, at - 1)) {
      const std::size_t end = at + relpath.size();
      if (path[at - 1] == '/' && (end == path.size() || path[end] == '/')) return at;
    }
    return path.size();
  }

  // Judges one entry of the directory `fd` (at `dir_path`). False when it is an offender
  // (nothing below it needs a look). *descend: a directory the walk should enter.
  bool entry(int fd, const std::string& dir_path, const std::string& rel, const std::string& name,
             bool* descend) {
    const auto info = info_at(fd, name.c_str());
    if (!info) return true;
    const std::string path = join(dir_path, name);
    if (in_.skip.count(path) != 0) return true;
    const MandatoryDeny* d = mandatory_deny_within(rel, /*allow_git_config=*/true);
    const std::size_t floor = d != nullptr ? name_start(path, d->relpath) : path.size();
    const bool fresh = is_new(*info, snap_.start.at) || marked(path, floor);
    // A symlink made to the first component of a protected name with more of them
    // (".claude" -> docs, holding commands/): the host follows it into what vigil never
    // judged under that name.
    if (S_ISLNK(info->mode) && fresh && name != ".git" && is_multi_head(name)) {
      offend(path, name, "a symlink made during the session: the host follows it to " + name +
                             "'s protected names");
      return false;
    }
    if (name == ".git" && !S_ISDIR(info->mode) && fresh) {
      if (auto why = git_file_danger(fd, dir_path, *info); !why.empty()) {
        offend(path, ".git", why);
        return false;
      }
    }
    if (name == ".gitmodules" && S_ISREG(info->mode)) {
      if (fresh) {
        auto text = read_small(fd, name.c_str(), kMaxConfig);
        const auto v = text ? git::judge_config(*text)
                            : git::ConfigVerdict{false, {text.error().message}};
        if (!v.safe) {
          offend(path, ".gitmodules", "git acts on what it names (" + joined(v.unsafe) + ")");
          return false;
        }
      }
      return true;
    }
    if (d != nullptr && !is_git_rule(*d) && fresh && !is_empty(fd, name, *info)) {
      offend(path, std::string(d->relpath),
             "protected name " + std::string(d->relpath) + " made during the session: " +
                 std::string(d->why));
      return false;
    }
    if (descend != nullptr) *descend = S_ISDIR(info->mode);
    return true;
  }

  static bool is_multi_head(const std::string& name) {
    for (const MandatoryDeny& d : mandatory_denies()) {
      const auto slash = d.relpath.find('/');
      if (slash != std::string_view::npos && d.relpath.substr(0, slash) == name) return true;
    }
    return false;
  }

  // An empty file or directory runs nothing. It is also what a placeholder is, and
  // another session sharing the workspace may have one bound there right now: moving it
  // would detach that session's mount (see session_dir.h).
  static bool is_empty(int fd, const std::string& name, const Info& info) {
    if (S_ISREG(info.mode)) return info.size == 0;
    if (!S_ISDIR(info.mode)) return false;
    UniqueFd d(::openat(fd, name.c_str(), kDirFlags));
    return d && list_dir(d.get()).empty();
  }

    // What makes a new ".git" (a file "gitdir: X", a symlink, anything but a directory)
  // dangerous: it points git at a repository whose hooks or config run a program. "" when
  // it is harmless (git worktree add, git submodule add).
  std::string git_file_danger(int fd, const std::string& dir_path, const Info& info) const {
    if (S_ISLNK(info.mode)) return "a symlink git follows to a repository vigil did not judge";
    if (!S_ISREG(info.mode)) return {};
    auto text = read_small(fd, ".git", kMaxGitFile);
    if (!text) return "a .git file vigil cannot read (" + text.error().message + ")";
    std::string_view t = *text;
    if (!t.starts_with("gitdir:")) return {};  // git refuses it: points nowhere
    t.remove_prefix(7);
    while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
    while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.remove_suffix(1);
    const std::string target(t);
    // Relative to the directory holding the .git file, as git reads it.
    UniqueFd repo(t.starts_with('/') ? ::open(target.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                                     : ::openat(fd, target.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!repo) return {};
    const std::string repo_path =
        lexically_normal(t.starts_with('/') ? target : dir_path + "/" + target);
    auto bad = repo_danger(repo.get(), repo_path);
    return bad.empty() ? std::string() : "points git at " + target + ", where " + bad;
  }

  // Whatever in the repository open on `fd` runs a program, whenever it was made; "" when
  // nothing does. For repositories a new .git file points at.
  std::string repo_danger(int fd, const std::string& path, int follow_commondir = 1) const {
    std::vector<Offender> found;
    repo_state(fd, path, found, became_repository(fd, path) || !is_git_dir(fd, path));
    if (!found.empty()) return found.front().path + ": " + found.front().reason;
    // A worktree's gitdir takes config and hooks from the repository its commondir names.
    if (follow_commondir == 0) return {};
    auto common = open_commondir(fd, path);
    if (!common.fd) return {};
    return repo_danger(common.fd.get(), common.path, follow_commondir - 1);
  }

  // A repository's own state: hooks and config added during the session.
  void git_dir(int fd, const std::string& path) {
    std::vector<Offender> found;
    repo_state(fd, path, found, became_repository(fd, path));
    for (auto& o : found)
      offend(std::move(o.path), std::move(o.rule), std::move(o.reason), std::move(o.keys));
    // A commondir made during the session hands git another repository's config and
    // hooks, as a .git file does (no placeholder caps a missing one under the gatekeeper).
    const std::string at = join(path, "commondir");
    auto c = info_at(fd, "commondir");
    if (!c || !(is_new(*c, snap_.start.at) || in_.renamed_into.count(at) != 0)) return;
    if (S_ISLNK(c->mode)) return offend(at, "git-commondir", "a symlink git follows for commondir");
    auto common = open_commondir(fd, path);
    if (!common.fd || common.path == path) return;
    // A repository in a writable root (a worktree's commondir names its main one) is
    // judged by the walk itself: what it holds goes, the pointer stays.
    const bool walked = std::any_of(in_.roots.begin(), in_.roots.end(),
                                    [&](const auto& r) { return path_is_under(common.path, r); });
    if (walked && is_git_dir(common.fd.get(), common.path)) return;
    if (auto bad = repo_danger(common.fd.get(), common.path); !bad.empty())
      offend(at, "git-commondir", "points git at " + common.named + ", where " + bad);
  }

  // Whether the directory became a git directory during the session, so that what it
  // held already has a meaning it did not have: it was made or renamed to this name
  // (`mv stage r/.git`; not a rename of a directory above it, which changes no meaning),
  // or one of the names git takes it for a repository by
  // (objects, refs, commondir) is new. (A new HEAD alone is not: git rewrites it on every
  // checkout. One that turns a directory into a repository is refused at the call:
  // observer/git_rules.h.)
  bool became_repository(int fd, const std::string& path) const {
    if (marked(path)) return true;
    auto self = info_at(fd, ".");
    if (self && is_new(*self, snap_.start.at)) return true;
    for (const char* sig : {"objects", "refs", "commondir"}) {
      auto i = info_at(fd, sig);
      if (i && is_new(*i, snap_.start.at)) return true;
    }
    return false;
  }

  const BackstopInputs& in_;
  const BackstopSnapshot& snap_;
  const BackstopLimits lim_;
  const std::chrono::steady_clock::time_point deadline_;
  bool stopped_ = false;
  std::set<std::string> checked_;  // record paths already judged ("dir/" for a directory's own state)
  std::string path_, rel_;          // the walk's current directory, absolute and in its root
  BackstopFindings out_;
};

}  // namespace

BackstopSnapshot take_backstop_snapshot(const std::vector<std::string>& configs) {
  BackstopSnapshot s;
  ::clock_gettime(CLOCK_REALTIME, &s.start.at);
  for (const auto& c : configs) {
    auto text = read_small(AT_FDCWD, c.c_str(), kMaxConfig);
    if (!text) continue;
    auto v = git::judge_config(*text);
    if (!v.safe) s.unsafe_at_launch[c] = std::move(v.unsafe);
  }
  return s;
}

void wait_for_coarse_clock(const BackstopSnapshot& snap) {
  if (snap.start.floor) return;
  // A timestamp may be coarse (the last tick) or, with multigrain timestamps, fine: only
  // once the coarse clock is past the start is either kind of a later change after it.
  for (;;) {
    timespec now{};
    ::clock_gettime(CLOCK_REALTIME_COARSE, &now);
    if (timespec_after(now, snap.start.at)) return;
    const timespec pause{0, 500'000};
    ::nanosleep(&pause, nullptr);
  }
}

BackstopFindings find_offenders(const BackstopInputs& in, const BackstopSnapshot& snap,
                                const BackstopLimits& limits) {
  Walk walk(in, snap, limits);
  for (const auto& root : in.roots) walk.root(root);
  for (const auto& path : in.written) {
    for (const auto& root : in.roots) {
      if (path_is_under(path, root)) walk.written(root, path);
    }
  }
  return std::move(walk).finish();
}

}  // namespace vigil
