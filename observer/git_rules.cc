#include "observer/git_rules.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "supervisor/core/fs/git_dir.h"
#include "supervisor/core/policy/git_safety.h"
#include "supervisor/core/policy/mandatory_denies.h"

namespace vigil::init {
namespace {

constexpr int kDir = O_RDONLY | O_DIRECTORY | O_CLOEXEC;

std::string_view last_of(std::string_view p) {
  const auto at = p.rfind('/');
  return at == std::string_view::npos ? p : p.substr(at + 1);
}
std::string_view parent_of(std::string_view p) {
  const auto at = p.rfind('/');
  if (at == std::string_view::npos) return {};
  return at == 0 ? std::string_view("/") : p.substr(0, at);
}

UniqueFd open_dir(std::string_view path, bool follow_last = true) {
  return UniqueFd(::open(std::string(path).c_str(), kDir | (follow_last ? 0 : O_NOFOLLOW)));
}

bool is_sample(std::string_view name) { return name.ends_with(".sample"); }

std::string hook_refusal(std::string_view name) {
  return "git hook hooks/" + std::string(name) +
         ": git runs it on its own (commit, checkout, ...) outside the sandbox; refused in "
         "every repository (only git's own *.sample files may be made)";
}

// The first entry of the directory `fd` that is not an inert *.sample; "" when none.
std::string first_live_hook(int fd) {
  UniqueFd listing(::dup(fd));
  DIR* d = listing ? ::fdopendir(listing.get()) : nullptr;
  if (d == nullptr) return {};
  (void)listing.release();  // closedir owns it now
  std::string found;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view n = e->d_name;
    if (n == "." || n == "..") continue;
    struct stat st {};
    const bool regular = ::fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
    if (!git::is_inert_hook(n, regular)) {
      found = n;
      break;
    }
  }
  ::closedir(d);
  return found;
}

std::string danger_refusal(const std::string& what, const std::vector<git::Danger>& found) {
  return what + ", where " + found.front().name + ": " + found.front().reason;
}

// `dir` (a directory about to be a git directory, or one already) holds, in its hooks,
// something git would run.
bool is_git_dir_at(std::string_view path) {
  if (last_of(path) == ".git") return true;
  UniqueFd fd = open_dir(path);
  return fd && git::is_git_directory(fd.get());
}

// A directory renamed to the first component of a protected name with more components
// (".claude", holding "commands"): the rest is judged on what it holds.
std::string multi_component_refusal(std::string_view rel, std::string_view from) {
  const std::string_view last = last_of(rel);
  for (const MandatoryDeny& d : mandatory_denies()) {
    const auto slash = d.relpath.find('/');
    if (slash == std::string_view::npos || d.relpath.substr(0, slash) != last) continue;
    if (last == ".git") continue;  // judged as a repository (below)
    const std::string rest(d.relpath.substr(slash + 1, d.relpath.find('/', slash + 1) - slash - 1));
    UniqueFd src = open_dir(from, /*follow_last=*/false);
    struct stat st {};
    if (src && ::fstatat(src.get(), rest.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
      return "protected name " + std::string(d.relpath) + " (" + std::string(d.why) +
             "): a directory renamed to " + std::string(last) + " would hold " + rest +
             "; refused at any depth under a writable root";
    }
  }
  return {};
}

// Reads a regular file of at most 1 MiB (a final symlink not followed); false otherwise.
bool read_config(std::string_view path, std::string* out) {
  return git::read_bounded(AT_FDCWD, std::string(path).c_str(), std::size_t{1} << 20, false, out);
}

// A config renamed into a git directory (how git writes one: config.lock, then rename):
// refused when it adds a key off the allowlist that the config it replaces did not hold
// (a key the user had is theirs; supervisor/core/policy/git_safety.h).
std::string config_refusal(std::string_view path, std::string_view from) {
  std::string text;
  if (!read_config(from, &text)) {
    return "a git config vigil cannot read whole (a regular file of at most 1 MiB), so cannot "
           "judge; refused in every repository";
  }
  const git::ConfigVerdict now = git::judge_config(text);
  if (now.safe) return {};
  std::vector<std::string> before;
  if (read_config(path, &text)) before = git::judge_config(text).unsafe;
  std::string added;
  for (const auto& k : now.unsafe) {
    if (std::find(before.begin(), before.end(), k) == before.end())
      added += (added.empty() ? "" : ", ") + k;
  }
  if (added.empty()) return {};
  return "git config " + added + ": git runs a program named by it (keys off vigil's "
         "allowlist); refused in every repository";
}

std::string_view without_trailing_slashes(std::string_view p) {
  while (p.size() > 1 && p.back() == '/') p.remove_suffix(1);
  return p;
}

}  // namespace

std::string git_write_refusal(std::string_view rel_in_root) {
  // mkdir("x/.git/hooks/") names the directory itself.
  rel_in_root = without_trailing_slashes(rel_in_root);
  // ".git/hooks/NAME" at any depth: git runs it (unless it is one of its own samples).
  const auto at = rel_in_root.rfind(".git/hooks");
  if (at != std::string_view::npos && (at == 0 || rel_in_root[at - 1] == '/')) {
    std::string_view rest = rel_in_root.substr(at + 10);
    if (rest.empty()) return {};  // the directory itself: `git init` makes it
    rest.remove_prefix(1);
    if (rest.find('/') == std::string_view::npos && is_sample(rest)) return {};
    return hook_refusal(rest);
  }
  return {};
}

bool git_may_judge_change(std::string_view path) {
  path = without_trailing_slashes(path);
  const std::string_view last = last_of(path);
  return last == "config" || last == "config.worktree" || last_of(parent_of(path)) == "hooks";
}

std::string git_meaning_refusal(std::string_view path, std::string_view rel_in_root,
                                std::string_view from, Emulation call) {
  path = without_trailing_slashes(path);
  rel_in_root = without_trailing_slashes(rel_in_root);
  const std::string_view last = last_of(path);
  const std::string_view parent = parent_of(path);
  // Cheap names first: most calls make a name none of these rules is about.
  const bool hooks_entry = last_of(parent) == "hooks";
  const bool config = last == "config" || last == "config.worktree";
  const bool interesting = hooks_entry || git::is_signature_name(last) || last == ".git" ||
                           last == "hooks" || config ||
                           (!from.empty() && is_mandatory_deny_head(last));
  if (!interesting) return {};
  if (config && is_git_dir_at(parent)) {
    switch (call) {
      case Emulation::kRename:
        if (!from.empty()) return config_refusal(path, from);
        break;
      case Emulation::kLink:
        // Either name: a link leaves the bytes writable under the other; git never links one.
        return "a git config with a second name (a hard link): its bytes stay writable under "
               "the other name; refused in every repository";
      case Emulation::kSymlink:
        return "a git config made a symlink: git reads what it points at, which vigil cannot "
               "judge at the call; refused in every repository";
      case Emulation::kOpen:
      case Emulation::kTruncate: {
        // Only in a repository as git decides it: a config beside no HEAD is nothing to
        // git until one comes, and a HEAD that makes the directory a repository is judged
        // on the config it finds then (the signature names, below).
        UniqueFd dir = open_dir(parent);
        if (!dir || !git::is_git_directory(dir.get())) break;
        return "a git config written in place: git writes one only through config.lock and a "
               "rename, where vigil judges the keys it adds (use `git config`); refused in "
               "every repository";
      }
      default:
        break;
    }
  }
  if (hooks_entry && !is_sample(last) && is_git_dir_at(parent_of(parent))) {
    return hook_refusal(last);
  }
  if (last == ".git" && call == Emulation::kSymlink) {
    return "a symlink named .git: git follows it to a repository vigil cannot judge at the "
           "call; refused at any depth under a writable root";
  }
  if (last == ".git" && !from.empty()) {
    UniqueFd src = open_dir(from, /*follow_last=*/false);
    if (src) {
      const auto found = git::repo_dangers(src.get(), 1);
      if (!found.empty()) return danger_refusal("a directory renamed to .git", found);
    }
  }
  if (last == "hooks" && !from.empty() && is_git_dir_at(parent)) {
    UniqueFd src = open_dir(from, /*follow_last=*/false);
    if (src) {
      if (auto h = first_live_hook(src.get()); !h.empty()) return hook_refusal(h);
    }
  }
  if (git::is_signature_name(last)) {
    UniqueFd dir = open_dir(parent);
    if (dir && !git::is_git_directory(dir.get()) && git::would_be_git_directory(dir.get(), last)) {
      const auto found = git::repo_dangers(dir.get(), 1);
      if (!found.empty()) {
        return danger_refusal(std::string(last) + " would make " + std::string(parent) +
                                  " a git repository",
                              found);
      }
    }
  }
  if (!from.empty()) return multi_component_refusal(rel_in_root, from);
  return {};
}

}  // namespace vigil::init
