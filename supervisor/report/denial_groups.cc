// The grouping of a block's denials (denial_groups.h).
#include "supervisor/report/denial_groups.h"

#include <algorithm>
#include <string>
#include <unordered_map>

namespace vigil {
namespace {

// The directory holding `path` ("/a/b/c" -> "/a/b", "/a" -> "/", "rel" -> "").
std::string_view parent_dir(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return {};
  return slash == 0 ? std::string_view("/") : path.substr(0, slash);
}

std::size_t depth(std::string_view dir) {
  return dir == "/" ? 0 : static_cast<std::size_t>(std::count(dir.begin(), dir.end(), '/'));
}

// The deepest directory holding both ("/a/b/c", "/a/b/d/e" -> "/a/b"; "/x", "/y" -> "/").
std::string_view common_dir(std::string_view a, std::string_view b) {
  while (!(b == a || (b.starts_with(a) && (a == "/" || b[a.size()] == '/')))) a = parent_dir(a);
  return a;
}

}  // namespace

// Groups of the denials by (kind, reason, directory), coarsened until they fit `slots`:
// each round lifts the deepest groups to their parent directory and merges again.
std::vector<DenialGroup> group_denials(const std::deque<Violation>& denied, std::size_t slots) {
  std::vector<std::string_view> dirs;
  dirs.reserve(denied.size());
  for (const auto& v : denied) {
    const bool groupable = v.kind == Violation::Kind::kFs && !v.target.empty() && v.target[0] == '/';
    dirs.push_back(groupable ? parent_dir(v.target) : std::string_view());
  }
  // One tree per cause: the denials of one reason whose directories share an ancestor two
  // or more levels deep (~/.npm/_cacache/tmp and ~/.npm/_logs under ~/.npm) are one line
  // from the start. Shallower ancestors (/, /usr) say nothing, so /etc and /usr/lib stay
  // apart unless the cap forces them together below.
  std::unordered_map<std::string_view, std::string_view> tree;  // reason -> common ancestor
  for (std::size_t i = 0; i < denied.size(); ++i) {
    if (dirs[i].empty()) continue;
    auto [it, fresh] = tree.emplace(denied[i].reason, dirs[i]);
    if (!fresh) it->second = common_dir(it->second, dirs[i]);
  }
  for (std::size_t i = 0; i < denied.size(); ++i) {
    if (dirs[i].empty()) continue;
    const std::string_view common = tree[denied[i].reason];
    if (depth(common) >= 2) dirs[i] = common;
  }
  for (;;) {
    std::vector<DenialGroup> groups;
    std::unordered_map<std::string, std::size_t> at;  // reason \0 dir -> group
    for (std::size_t i = 0; i < denied.size(); ++i) {
      const Violation& v = denied[i];
      const bool groupable = !dirs[i].empty();
      std::size_t gi = groups.size();
      if (groupable) {
        std::string key = v.reason;
        key += '\0';
        key += dirs[i];
        auto [it, fresh] = at.emplace(std::move(key), groups.size());
        gi = it->second;
        if (fresh) groups.push_back(DenialGroup{&v, dirs[i], {}, 0, 0});
      } else {
        groups.push_back(DenialGroup{&v, {}, {}, 0, 0});
      }
      DenialGroup& g = groups[gi];
      g.members.push_back(&v);
      g.attempts += v.count;
      g.actions |= v.actions;
    }
    if (groups.size() <= slots) return groups;
    std::size_t deepest = 0;
    for (const auto& d : dirs)
      if (!d.empty()) deepest = std::max(deepest, depth(d));
    if (deepest <= 1) return groups;  // "/usr" and "/" stay apart: "/" says nothing
    for (auto& d : dirs)
      if (!d.empty() && depth(d) == deepest) d = parent_dir(d);
  }
}

}  // namespace vigil
