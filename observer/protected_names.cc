#include "observer/protected_names.h"

#include "observer/git_rules.h"
#include "supervisor/core/policy/path_expand.h"
#include "supervisor/core/policy/mandatory_denies.h"

namespace vigil::init {

std::string protected_name_refusal(const std::vector<Mount>& mounts, std::string_view path,
                                   std::string_view from, Emulation call) {
  if (path.empty() || path[0] != '/') return {};
  const Classified c = classify_write(mounts, path);
  // Read-only: the kernel refuses (EROFS). Ephemeral: it vanishes with the sandbox.
  if (c.verdict != WriteVerdict::kAllowed || c.mount_point.empty()) return {};
  // Relative to the outermost writable mount over the path, not the one that decided: a
  // directory vigil pinned inside a writable root (.claude, holding an agents/ it made
  // read-only) is a mount of its own, and a name under it (commands/x) must be judged with
  // the components above it (.claude/commands/x).
  std::string_view base = c.mount_point;
  for (const Mount& m : mounts) {
    if (m.read_only || m.mount_point == "/" || m.mount_point.size() >= base.size()) continue;
    if (path_is_under(path, m.mount_point)) base = m.mount_point;
  }
  std::string_view rel = path;
  if (base != "/") {
    if (!rel.starts_with(base)) return {};
    rel.remove_prefix(base.size());
  }
  while (!rel.empty() && rel.front() == '/') rel.remove_prefix(1);
  const MandatoryDeny* d = mandatory_deny_within(rel, /*allow_git_config=*/false);
  // What the name comes to mean with what is there already (a repository's HEAD, a
  // directory renamed to .git or .claude): the git rules, with a look at the files.
  if (d == nullptr) return git_meaning_refusal(path, rel, from, call);
  // git writes a commondir only into a worktree's gitdir (.git/worktrees/NAME/), never
  // straight into a .git: one there would hand git another directory's config and hooks.
  if (d->relpath == ".git/commondir") {
    return "protected name .git/commondir (" + std::string(d->why) +
           "): refused at any depth under a writable root";
  }
  // .gitmodules too: `git submodule add` writes it; what it names is judged by the git
  // rules and, after the command, by the backstop (supervisor/backstop/backstop.h).
  if (d->relpath.starts_with(".git/") || d->relpath == ".gitmodules") {
    std::string why = git_write_refusal(rel);
    return why.empty() ? git_meaning_refusal(path, rel, from, call) : why;
  }
  return "protected name " + std::string(d->relpath) + " (" + std::string(d->why) +
         "): refused at any depth under a writable root";
}

}  // namespace vigil::init
