#include "supervisor/launch/workspace_checks.h"

#include <sys/stat.h>

#include "supervisor/core/policy/mandatory_denies.h"
#include "supervisor/core/policy/path_expand.h"

namespace vigil {
namespace {

bool is_dir(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

std::vector<std::string> home_root_warnings(const Policy& policy) {
  std::vector<std::string> out;
  if (policy.home.empty() || policy.home == "/") return out;
  const std::string home = resolve_symlinks(policy.home);
  for (const auto& r : policy.fs.allow_write) {
    if (r.session_temp || r.kind != PathKind::kDir) continue;
    if (!path_is_under(home, r.resolved)) continue;
    const bool is_cwd = r.origin == "default: the working directory";
    out.push_back(
        r.origin + " (" + r.resolved + ") holds your whole home directory, so all of it is " +
        "writable (~/.config/autostart, ~/.ssh, ~/.local/bin: files that run later, outside " +
        "the sandbox); " +
        (is_cwd ? "run from a project directory, or pass --settings with a narrower "
                  "filesystem.allowWrite (the project's directory)"
                : "list the project's directory in filesystem.allowWrite instead"));
  }
  return out;
}

std::optional<std::string> enclosing_git_dir(const std::string& dir) {
  for (std::string d = dir; !d.empty();) {
    const std::string git = d == "/" ? "/.git" : d + "/.git";
    if (is_dir(git)) return git;
    if (d == "/") break;
    const auto slash = d.rfind('/');
    d = slash == 0 ? "/" : d.substr(0, slash);
  }
  return std::nullopt;
}

void add_writable_repository(Policy* policy, std::vector<ProtectedPath>* protected_paths) {
  if (!policy->vigil.git_writable_repository) return;
  const std::string cwd = resolve_symlinks(lexically_normal(policy->cwd));
  const auto git = enclosing_git_dir(cwd);
  if (!git) return;
  for (const auto& r : policy->fs.allow_write) {
    if (r.kind == PathKind::kDir && path_is_under(*git, r.resolved)) return;  // already
  }
  PathRule root;
  root.written = root.literal = root.resolved = *git;
  root.origin = "vigil.git.writableRepository";
  root.kind = PathKind::kDir;
  policy->fs.allow_write.push_back(std::move(root));
  // The repository's own state is git's to write; what makes git run something stays
  // denied, exactly as the scan denies it in a repository inside a writable root.
  for (const auto& rule : mandatory_denies()) {
    if (!rule.relpath.starts_with(".git/")) continue;
    const std::string path = *git + std::string(rule.relpath.substr(4));
    const PathState state = stat_path(path);
    const bool exists = state.kind != PathKind::kMissing;
    protected_paths->push_back(ProtectedPath{
        exists ? path : state.first_missing, &rule, exists || state.blocked_by_existing,
        exists || state.first_missing == path ? rule.shape : DenyShape::kDir});
  }
}

}  // namespace vigil
