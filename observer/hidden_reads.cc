#include "observer/hidden_reads.h"

#include <fcntl.h>

#include "observer/emulate.h"
#include "supervisor/core/policy/path_expand.h"

namespace vigil::init {

const HiddenPath* hiding_rule(const std::vector<HiddenPath>& layout, std::string_view resolved) {
  const HiddenPath* deepest = nullptr;
  for (const HiddenPath& e : layout) {
    if (!path_is_under(resolved, e.path)) continue;
    if (deepest == nullptr || e.path.size() > deepest->path.size()) deepest = &e;
  }
  return deepest != nullptr && deepest->hides ? deepest : nullptr;
}

std::optional<ReadHit> read_hit_by_spelling(const std::vector<HiddenPath>& layout,
                                            std::string_view spelled) {
  if (spelled.empty() || spelled[0] != '/') return std::nullopt;
  // ".." folded lexically is wrong past a symlink ("link/.." is the link target's
  // parent): such a spelling is resolved instead.
  for (std::size_t at = spelled.find(".."); at != std::string_view::npos;
       at = spelled.find("..", at + 1)) {
    const bool starts = spelled[at - 1] == '/';
    const bool ends = at + 2 == spelled.size() || spelled[at + 2] == '/';
    if (starts && ends) return std::nullopt;
  }
  std::string lexical = lexically_normal(spelled);
  const HiddenPath* rule = hiding_rule(layout, lexical);
  if (rule == nullptr) return std::nullopt;
  return ReadHit{rule, std::move(lexical)};
}

std::optional<ReadHit> hidden_read(const std::vector<HiddenPath>& layout, const CallPlan& plan,
                                   pid_t pid, CwdCache* cwds) {
  if (layout.empty() || plan.on_fd) return std::nullopt;
  if (plan.target.dirfd == kCwd || plan.target.path.starts_with('/')) {
    if (auto hit = read_hit_by_spelling(layout, plan.target.path)) return hit;
  }
  // The name the kernel will open: its last symlink followed unless O_NOFOLLOW (a
  // dangling or missing name keeps its spelling below its resolved parent).
  const bool follow = (plan.flags & O_NOFOLLOW) == 0;
  const std::string resolved = resolved_name(plan.target, pid, follow, cwds);
  if (resolved.empty() || resolved[0] != '/') return std::nullopt;  // a pipe, a socket, ...
  const HiddenPath* rule = hiding_rule(layout, resolved);
  if (rule == nullptr) return std::nullopt;
  return ReadHit{rule, resolved};
}

}  // namespace vigil::init
