#include "supervisor/core/policy/glob.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>

#include "supervisor/core/policy/path_expand.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil {
namespace {

std::vector<std::string_view> split(std::string_view p) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < p.size()) {
    while (i < p.size() && p[i] == '/') ++i;
    const std::size_t j = p.find('/', i);
    const std::size_t end = j == std::string_view::npos ? p.size() : j;
    if (end > i) out.push_back(p.substr(i, end - i));
    i = end;
  }
  return out;
}

// One bracket expression at p[*pi] ('['), against c. Advances *pi past it. A '[' with no
// closing ']' is a literal '['.
bool match_set(std::string_view p, std::size_t* pi, char c, bool* ok) {
  std::size_t i = *pi + 1;
  bool negate = false;
  if (i < p.size() && (p[i] == '!' || p[i] == '^')) {
    negate = true;
    ++i;
  }
  bool hit = false;
  bool first = true;
  for (; i < p.size() && (first || p[i] != ']'); first = false) {
    if (i + 2 < p.size() && p[i + 1] == '-' && p[i + 2] != ']') {
      hit = hit || (p[i] <= c && c <= p[i + 2]);
      i += 3;
    } else {
      hit = hit || p[i] == c;
      ++i;
    }
  }
  if (i >= p.size()) {  // unterminated: a literal '['
    *ok = c == '[';
    *pi += 1;
    return false;
  }
  *pi = i + 1;
  *ok = hit != negate;
  return true;
}

// One component (no '/'), with backtracking over the last '*'.
bool match_component(std::string_view p, std::string_view s) {
  std::size_t pi = 0, si = 0, star_p = std::string_view::npos, star_s = 0;
  while (si < s.size()) {
    if (pi < p.size() && p[pi] == '*') {
      star_p = ++pi;
      star_s = si;
      continue;
    }
    if (pi < p.size()) {
      bool ok = false;
      std::size_t next = pi;
      if (p[pi] == '[') {
        match_set(p, &next, s[si], &ok);
      } else {
        ok = p[pi] == '?' || p[pi] == s[si];
        next = pi + 1;
      }
      if (ok) {
        pi = next;
        ++si;
        continue;
      }
    }
    if (star_p == std::string_view::npos) return false;
    pi = star_p;
    si = ++star_s;
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

bool match_parts(const std::vector<std::string_view>& p, std::size_t pi,
                 const std::vector<std::string_view>& s, std::size_t si) {
  while (pi < p.size()) {
    if (p[pi] == "**") {
      for (std::size_t k = si; k <= s.size(); ++k) {
        if (match_parts(p, pi + 1, s, k)) return true;
      }
      return false;
    }
    if (si == s.size() || !match_component(p[pi], s[si])) return false;
    ++pi;
    ++si;
  }
  return si == s.size();
}

void walk(const std::string& dir, int depth, std::string_view pattern, const GlobLimits& lim,
          std::size_t* entries, GlobExpansion* out) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) {
    out->unreadable.push_back(dir);
    return;
  }
  DIR* d = ::fdopendir(fd.get());
  if (d == nullptr) {
    out->unreadable.push_back(dir);
    return;
  }
  (void)fd.release();  // closedir() closes it
  std::vector<std::pair<std::string, bool>> children;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name(e->d_name);
    if (name == "." || name == "..") continue;
    if (++*entries > lim.max_entries) {
      out->truncated = true;
      break;
    }
    const std::string child = dir == "/" ? "/" + std::string(name) : dir + "/" + std::string(name);
    bool is_dir = e->d_type == DT_DIR;
    if (e->d_type == DT_UNKNOWN) {
      struct stat st {};
      is_dir = ::lstat(child.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    }
    children.emplace_back(child, is_dir);
  }
  ::closedir(d);
  for (const auto& [child, is_dir] : children) {
    if (glob_match(pattern, child)) out->matches.push_back(child);
    if (!is_dir || out->truncated) continue;
    if (depth + 1 >= lim.max_depth) {
      out->truncated = true;
      continue;
    }
    walk(child, depth + 1, pattern, lim, entries, out);
  }
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view path) {
  if (pattern.empty() || pattern.back() == '/') return false;
  return match_parts(split(pattern), 0, split(path), 0);
}

std::string glob_base(std::string_view pattern) {
  std::string base;
  for (const auto part : split(pattern)) {
    if (has_glob_chars(part)) break;
    base += "/" + std::string(part);
  }
  return base.empty() ? "/" : base;
}

std::string real_glob_pattern(std::string_view pattern) {
  const std::string base = glob_base(pattern);
  const std::string real = resolve_symlinks(base);
  const auto parts = split(pattern);
  std::string real_pattern = real == "/" ? "" : real;
  for (std::size_t i = split(base).size(); i < parts.size(); ++i)
    real_pattern += "/" + std::string(parts[i]);
  return real_pattern.empty() ? "/" : real_pattern;
}

GlobExpansion expand_glob(std::string_view pattern, const GlobLimits& limits) {
  GlobExpansion out;
  // Walk the real directory (a symlinked home is common), matching real paths: the
  // mounts are made on resolved paths anyway.
  const std::string real = resolve_symlinks(glob_base(pattern));
  const std::string real_pattern = real_glob_pattern(pattern);
  struct stat st {};
  if (::lstat(real.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return out;
  std::size_t entries = 0;
  walk(real, 0, real_pattern, limits, &entries, &out);
  std::sort(out.matches.begin(), out.matches.end());
  return out;
}

}  // namespace vigil
