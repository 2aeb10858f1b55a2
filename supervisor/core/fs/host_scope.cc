#include "supervisor/core/fs/host_scope.h"

#include <algorithm>

namespace vigil {

bool path_within(std::string_view path, std::string_view dir) {
  if (dir == "/") return !path.empty() && path[0] == '/';
  return path.starts_with(dir) && (path.size() == dir.size() || path[dir.size()] == '/');
}

namespace {

// kSandboxOwnTrees, and /sys, which vigil-init counts as the sandbox's own with them
// (read-only from the host: nothing of it is ever the session's change).
constexpr std::string_view kOwnTrees[] = {"/dev", "/proc", "/sys"};

bool is_lexically_normal(std::string_view p) {
  if (p.empty() || p[0] != '/') return false;
  if (p.size() > 1 && p.back() == '/') return false;
  if (p.find('\0') != std::string_view::npos) return false;
  std::size_t i = 1;
  while (i < p.size()) {
    const std::size_t j = std::min(p.find('/', i), p.size());
    const std::string_view part = p.substr(i, j - i);
    if (part.empty() || part == "." || part == "..") return false;
    i = j + 1;
  }
  return true;
}

void add_own(HostScope* s, const std::string& p) {
  if (!p.empty() && p[0] == '/' &&
      std::find(s->sandbox_own.begin(), s->sandbox_own.end(), p) == s->sandbox_own.end())
    s->sandbox_own.push_back(p);
}

}  // namespace

HostScope legacy_host_scope(const std::string& session_base) {
  HostScope s;
  s.writable = {"/"};
  for (const auto t : kOwnTrees) add_own(&s, std::string(t));
  add_own(&s, session_base);
  return s;
}

HostScope host_scope_of(const Policy& policy, const std::string& session_base) {
  HostScope s;
  for (const auto t : kOwnTrees) add_own(&s, std::string(t));
  add_own(&s, session_base);
  for (const PathRule& r : policy.fs.allow_write) {
    if (r.session_temp) {
      add_own(&s, r.resolved);
      continue;
    }
    // A missing root is not mounted: nothing of it is writable.
    if (r.kind == PathKind::kMissing || r.resolved.empty() || r.resolved[0] != '/') continue;
    if (std::find(s.writable.begin(), s.writable.end(), r.resolved) == s.writable.end())
      s.writable.push_back(r.resolved);
  }
  // denyRead: a tmpfs over a directory, /dev/null over a file; a write there lands in
  // the sandbox's own mount (or nowhere), never in the host's name.
  for (const PathRule& r : policy.fs.deny_read) add_own(&s, r.resolved);
  return s;
}

bool in_host_scope(const HostScope& scope, std::string_view path) {
  if (!is_lexically_normal(path)) return false;
  // As the mount table decides: the deepest mount covering the path is what a write
  // there reached (a denyRead tmpfs over ~ with allowWrite ~/project below it: the
  // project is the host's; a writable ~ with a denyRead ~/.cache below it: the cache is
  // the sandbox's). On a tie the sandbox's own wins (never act on the doubtful side).
  std::size_t host = 0;
  bool any_host = false;
  for (const auto& w : scope.writable) {
    if (path_within(path, w) && (!any_host || w.size() > host)) {
      host = w.size();
      any_host = true;
    }
  }
  if (!any_host) return false;
  for (const auto& o : scope.sandbox_own) {
    if (path_within(path, o) && o.size() >= host) return false;
  }
  return true;
}

}  // namespace vigil
