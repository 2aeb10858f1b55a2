// What in a repository makes git run a program (the post-run backstop's git judgement,
// backstop.cc): config keys off vigil's allowlist, hooks, a core.worktree outside the
// writable roots, the repository a commondir names. For the supervisor after the sandbox
// is gone; thread-compatible.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "supervisor/backstop/backstop_types.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil::backstop_repo {

// A config bigger than this is not judged but refused: git's own are a few hundred bytes.
inline constexpr std::size_t kMaxConfig = 1 << 20;

// "a, b, c": a list of config keys in one line.
std::string joined(const std::vector<std::string>& v);

// The command renamed something to `path` or to a directory above it that is no
// shorter than `floor` bytes: what it holds, whatever its age, has the meaning its new
// name gives it. `floor` is where the protected name begins (".claude" of
// ".claude/commands"): a rename above it (proj -> proj2) gives nothing a new meaning.
bool marked(const BackstopInputs& in, const std::string& path, std::size_t floor);

// The directory a gitdir's commondir names, opened as git reads it (relative to the
// gitdir); no fd when there is none.
struct CommonDir {
  UniqueFd fd;
  std::string named;  // as the file spells it
  std::string path;   // absolute, normalised
};
CommonDir open_commondir(int fd, const std::string& path);

// core.worktree (on the allowlist: submodules need it) must name a directory inside a
// writable root, or git on the host would check files out anywhere ($HOME/.bashrc).
// Returns the offending value, "" when there is none.
std::string worktree_outside(const BackstopInputs& in, std::string_view config,
                             const std::string& git_dir);

// The config and hooks of the repository open on `fd` (at `path`) that run a program,
// appended to `out`. `all`: the directory became a repository during the session;
// everything in it is judged, whatever its age (but the unsafe keys a config had at
// launch, in `snap`); otherwise only what was made during the session.
void repo_state(const BackstopInputs& in, const BackstopSnapshot& snap, int fd,
                const std::string& path, std::vector<Offender>& out, bool all);

}  // namespace vigil::backstop_repo
