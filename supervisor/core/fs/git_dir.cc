#include "supervisor/core/fs/git_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>

#include "supervisor/core/policy/git_safety.h"

namespace vigil::git {
namespace {

constexpr int kDir = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
// git's own are a few hundred bytes; one bigger is not judged but refused.
constexpr std::size_t kMaxConfig = 1 << 20;

}  // namespace

bool read_bounded(int dir, const char* name, std::size_t max, bool follow, std::string* out) {
  const int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW);
  UniqueFd fd(::openat(dir, name, flags));
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  out->clear();
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    out->append(buf, static_cast<std::size_t>(n));
    if (out->size() > max) return false;
  }
}

namespace {

bool is_hex_id(std::string_view s) {
  std::size_t n = 0;
  while (n < s.size() && std::isxdigit(static_cast<unsigned char>(s[n])) != 0) ++n;
  // SHA-1's 40 digits or more (get_oid_hex_any reads a prefix: what follows is ignored).
  return n >= 40;
}

bool searchable(int dir, const char* name) {
  return ::faccessat(dir, name, X_OK, AT_EACCESS) == 0;
}

bool exists_nofollow(int dir, const char* name) {
  struct stat st {};
  return ::fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

std::string trim_end(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

void config_dangers(int dir, const char* cfg, std::vector<Danger>* out) {
  struct stat st {};
  if (::fstatat(dir, cfg, &st, AT_SYMLINK_NOFOLLOW) != 0) return;
  if (S_ISLNK(st.st_mode)) {
    out->push_back({cfg, "git-config", "a symlink git follows for the repository's config"});
    return;
  }
  if (!S_ISREG(st.st_mode)) return;
  std::string text;
  if (!read_bounded(dir, cfg, kMaxConfig, false, &text)) {
    out->push_back({cfg, "git-config", "a config vigil cannot read whole, so cannot judge"});
    return;
  }
  const ConfigVerdict v = judge_config(text);
  if (!v.safe) {
    out->push_back({cfg, "git-config",
                    "git runs a program named by " + joined(v.unsafe) +
                        " (keys off vigil's allowlist)"});
  }
}

void hook_dangers(int dir, std::vector<Danger>* out, std::size_t max) {
  struct stat st {};
  if (::fstatat(dir, "hooks", &st, AT_SYMLINK_NOFOLLOW) != 0) return;
  if (!S_ISDIR(st.st_mode)) {
    out->push_back({"hooks", "git-hook", "hooks is not a directory"});
    return;
  }
  UniqueFd hooks(::openat(dir, "hooks", kDir | O_NOFOLLOW));
  if (!hooks) return;
  UniqueFd listing(::dup(hooks.get()));
  DIR* d = listing ? ::fdopendir(listing.get()) : nullptr;
  if (d == nullptr) return;
  (void)listing.release();  // closedir owns it now
  while (const dirent* e = ::readdir(d)) {
    const std::string_view n = e->d_name;
    if (n == "." || n == "..") continue;
    struct stat h {};
    const bool regular = ::fstatat(hooks.get(), e->d_name, &h, AT_SYMLINK_NOFOLLOW) == 0 &&
                         S_ISREG(h.st_mode);
    if (is_inert_hook(n, regular)) continue;
    out->push_back({"hooks/" + std::string(n), "git-hook",
                    "git runs hooks/" + std::string(n) + " on its own (commit, checkout, ...)"});
    if (out->size() >= max) break;
  }
  ::closedir(d);
}

}  // namespace

bool valid_head(int dir_fd) {
  struct stat st {};
  if (::fstatat(dir_fd, "HEAD", &st, AT_SYMLINK_NOFOLLOW) != 0) return false;
  if (S_ISLNK(st.st_mode)) {
    char buf[256];
    const ssize_t n = ::readlinkat(dir_fd, "HEAD", buf, sizeof buf - 1);
    return n >= 5 && std::string_view(buf, 5) == "refs/";
  }
  std::string text;
  // git reads at most 255 bytes of it.
  UniqueFd fd(::openat(dir_fd, "HEAD", O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return false;
  char buf[256];
  const ssize_t n = ::read(fd.get(), buf, sizeof buf - 1);
  if (n < 0) return false;
  std::string_view t(buf, static_cast<std::size_t>(n));
  if (t.starts_with("ref:")) {
    std::string_view r = t.substr(4);
    while (!r.empty() && std::isspace(static_cast<unsigned char>(r.front())) != 0) r.remove_prefix(1);
    if (r.starts_with("refs/")) return true;
  }
  return is_hex_id(t);
}

bool is_signature_name(std::string_view name) {
  return name == "HEAD" || name == "objects" || name == "refs" || name == "commondir";
}

UniqueFd open_common_dir(int dir_fd) {
  if (!exists_nofollow(dir_fd, "commondir")) return UniqueFd(::fcntl(dir_fd, F_DUPFD_CLOEXEC, 0));
  std::string named;
  // git follows a symlinked commondir as it reads any file.
  if (!read_bounded(dir_fd, "commondir", 4096, true, &named)) return UniqueFd();
  named = trim_end(std::move(named));
  if (named.empty()) return UniqueFd();
  return UniqueFd(::openat(dir_fd, named.c_str(), kDir));
}

bool is_git_directory(int dir_fd) {
  if (!valid_head(dir_fd)) return false;
  UniqueFd common = open_common_dir(dir_fd);
  return common && searchable(common.get(), "objects") && searchable(common.get(), "refs");
}

bool would_be_git_directory(int dir_fd, std::string_view adding) {
  const bool head = adding == "HEAD" || exists_nofollow(dir_fd, "HEAD");
  if (!head) return false;
  if (adding == "commondir") return true;  // what it will name is not known yet
  UniqueFd common = open_common_dir(dir_fd);
  if (!common) return false;
  const bool own = !exists_nofollow(dir_fd, "commondir");
  const bool objects = (own && adding == "objects") || searchable(common.get(), "objects");
  const bool refs = (own && adding == "refs") || searchable(common.get(), "refs");
  return objects && refs;
}

UniqueFd open_dot_git(int parent_fd) {
  struct stat st {};
  if (::fstatat(parent_fd, ".git", &st, 0) != 0) return UniqueFd();
  if (S_ISDIR(st.st_mode)) return UniqueFd(::openat(parent_fd, ".git", kDir));
  if (!S_ISREG(st.st_mode)) return UniqueFd();
  std::string text;
  if (!read_bounded(parent_fd, ".git", 4096, true, &text)) return UniqueFd();
  std::string_view t = text;
  if (!t.starts_with("gitdir:")) return UniqueFd();
  t.remove_prefix(7);
  while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back())) != 0) t.remove_suffix(1);
  if (t.empty()) return UniqueFd();
  return UniqueFd(::openat(parent_fd, std::string(t).c_str(), kDir));
}

std::vector<Danger> repo_dangers(int dir_fd, std::size_t max) {
  std::vector<Danger> out;
  config_dangers(dir_fd, "config", &out);
  config_dangers(dir_fd, "config.worktree", &out);
  hook_dangers(dir_fd, &out, max);
  // A worktree's gitdir takes config and hooks from its common directory: judged when
  // that is no repository yet (one that is has its meaning already: `git worktree add`
  // in a repository whose config holds the user's own aliases goes on).
  if (exists_nofollow(dir_fd, "commondir") && out.size() < max) {
    UniqueFd common = open_common_dir(dir_fd);
    if (common && !is_git_directory(common.get())) {
      std::vector<Danger> more;
      config_dangers(common.get(), "config", &more);
      hook_dangers(common.get(), &more, max);
      for (auto& d : more) {
        d.name = "commondir: " + d.name;
        out.push_back(std::move(d));
      }
    }
  }
  if (out.size() > max) out.resize(max);
  return out;
}

}  // namespace vigil::git
