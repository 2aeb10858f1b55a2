// The backstop's git judgement (backstop_repo.h).
#include "supervisor/backstop/backstop_repo.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <utility>

#include "supervisor/backstop/backstop_fs.h"
#include "supervisor/core/policy/git_safety.h"
#include "supervisor/core/policy/path_expand.h"

namespace vigil::backstop_repo {
namespace {

using namespace backstop_fs;

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
constexpr std::size_t kMaxGitFile = 4096;

}  // namespace

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

bool marked(const BackstopInputs& in, const std::string& path, std::size_t floor) {
  if (in.renamed_into.empty()) return false;
  std::string_view p = path;
  while (p.size() >= floor && !p.empty()) {
    if (in.renamed_into.count(std::string(p)) != 0) return true;
    const auto at = p.rfind('/');
    if (at == std::string_view::npos || at == 0) return false;
    p = p.substr(0, at);
  }
  return false;
}

CommonDir open_commondir(int fd, const std::string& path) {
  CommonDir c;
  auto text = read_small(fd, "commondir", kMaxGitFile);
  if (!text) return c;
  c.named = *text;
  while (!c.named.empty() && (c.named.back() == '\n' || c.named.back() == '\r')) c.named.pop_back();
  c.fd.reset(::openat(fd, c.named.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  c.path = lexically_normal(c.named.starts_with('/') ? c.named : path + "/" + c.named);
  return c;
}

std::string worktree_outside(const BackstopInputs& in, std::string_view config,
                             const std::string& git_dir) {
  auto entries = git::parse_config(config);
  if (!entries) return {};
  for (const auto& e : *entries) {
    if (e.section != "core" || e.has_subsection || e.name != "worktree") continue;
    // As git will: from the gitdir, through whatever symlinks the session left.
    const std::string where = resolve_symlinks(
        lexically_normal(e.value.starts_with('/') ? e.value : git_dir + "/" + e.value));
    const bool inside = std::any_of(in.roots.begin(), in.roots.end(), [&](const auto& r) {
      return path_is_under(where, r);
    });
    if (!inside) return e.value;
  }
  return {};
}

void repo_state(const BackstopInputs& in, const BackstopSnapshot& snap, int fd,
                const std::string& path, std::vector<Offender>& out, bool all) {
  const auto offend = [&out](std::string p, std::string rule, std::string reason) {
    out.push_back(Offender{std::move(p), std::move(rule), std::move(reason)});
  };
  for (const char* cfg : {"config", "config.worktree"}) {
    auto i = info_at(fd, cfg);
    if (!i || !(all || is_new(*i, snap.start.at))) continue;
    const std::string at = join(path, cfg);
    if (S_ISLNK(i->mode)) {
      offend(at, "git-config", "a symlink git follows for the repository's config");
      continue;
    }
    if (!S_ISREG(i->mode)) continue;
    auto text = read_small(fd, cfg, kMaxConfig);
    auto v = text ? git::judge_config(*text) : git::ConfigVerdict{false, {text.error().message}};
    const auto before = snap.unsafe_at_launch.find(at);
    std::vector<std::string> added;
    for (auto& k : v.unsafe) {
      const bool had = before != snap.unsafe_at_launch.end() &&
                       std::find(before->second.begin(), before->second.end(), k) !=
                           before->second.end();
      if (!had) added.push_back(std::move(k));
    }
    if (!added.empty()) {
      offend(at, "git-config",
             "git runs a program named by " + joined(added) + " (keys off vigil's allowlist)");
      if (text) out.back().keys = added;  // unparsable text has no keys to take out
    } else if (text) {
      if (auto w = worktree_outside(in, *text, path); !w.empty()) {
        offend(at, "git-config",
               "core.worktree " + w + " lies outside the writable roots: a checkout on the "
               "host would write there");
      }
    }
  }
  const std::string hooks_path = join(path, "hooks");
  auto h = info_at(fd, "hooks");
  if (!h) return;
  if (S_ISLNK(h->mode) || !S_ISDIR(h->mode)) {
    if (all || is_new(*h, snap.start.at))
      offend(hooks_path, "git-hook", "hooks is not a directory");
    return;
  }
  UniqueFd hooks(::openat(fd, "hooks", kDirFlags));
  if (!hooks) return;
  // A directory renamed into hooks: every entry it brought is new there.
  all = all || marked(in, hooks_path, hooks_path.size());
  for (const auto& e : list_dir(hooks.get())) {
    auto i = info_at(hooks.get(), e.name.c_str());
    if (!i || git::is_inert_hook(e.name, S_ISREG(i->mode)) ||
        !(all || is_new(*i, snap.start.at)))
      continue;
    offend(join(hooks_path, e.name), "git-hook",
           "git runs hooks/" + e.name + " on its own (commit, checkout, ...)");
  }
}

}  // namespace vigil::backstop_repo
