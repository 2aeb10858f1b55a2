#include "supervisor/core/policy/path_expand.h"

#include <sys/stat.h>

#include <climits>
#include <cstdlib>
#include <memory>
#include <vector>

namespace vigil {

std::string lexically_normal(std::string_view abs) {
  std::vector<std::string_view> parts;
  size_t i = 0;
  while (i < abs.size()) {
    while (i < abs.size() && abs[i] == '/') ++i;
    const size_t start = i;
    while (i < abs.size() && abs[i] != '/') ++i;
    const std::string_view part = abs.substr(start, i - start);
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();  // ".." at "/" stays at "/", as the kernel does
      continue;
    }
    parts.push_back(part);
  }
  if (parts.empty()) return "/";
  std::string out;
  for (const auto p : parts) {
    out += '/';
    out += p;
  }
  return out;
}

Result<std::string> expand_settings_path(std::string_view written, std::string_view cwd,
                                         std::string_view home) {
  if (written.empty()) return make_error(Errc::kInvalidPolicy, "path cannot be empty");
  if (written.find('\0') != std::string_view::npos) {
    return make_error(Errc::kInvalidPolicy, "path contains a NUL byte");
  }
  if (written[0] == '~') {
    if (written.size() > 1 && written[1] != '/') {
      return make_error(Errc::kInvalidPolicy,
                        "\"~user\" paths are not supported; write the absolute path");
    }
    if (home.empty() || home[0] != '/') {
      return make_error(Errc::kInvalidPolicy,
                        "path starts with ~ but HOME is not an absolute path");
    }
    std::string joined(home);
    joined += '/';
    joined += written.substr(1);
    return lexically_normal(joined);
  }
  if (written[0] == '/') return lexically_normal(written);
  // Normalised first: path_is_under compares spellings, and "/w/" is not a prefix of "/w/x"
  // component-wise.
  const std::string base = lexically_normal(cwd);
  std::string normal = lexically_normal(base + "/" + std::string(written));
  if (!path_is_under(normal, base)) {
    return make_error(Errc::kInvalidPolicy,
                      "relative path climbs out of the working directory with \"..\"; write the "
                      "absolute path if that is meant");
  }
  return normal;
}

std::string resolve_symlinks(std::string_view abs) {
  std::string path = lexically_normal(abs);
  std::string rest;
  // Walk up until an ancestor exists, then re-append the missing components.
  while (true) {
    std::unique_ptr<char, decltype(&std::free)> real(::realpath(path.c_str(), nullptr), &std::free);
    if (real) {
      std::string out(real.get());
      if (!rest.empty()) {
        if (out != "/") out += '/';
        out += rest;
      }
      return lexically_normal(out);
    }
    if (path == "/") return lexically_normal(abs);
    const size_t slash = path.rfind('/');
    const std::string leaf = path.substr(slash + 1);
    rest = rest.empty() ? leaf : leaf + "/" + rest;
    path = slash == 0 ? "/" : path.substr(0, slash);
  }
}

PathState stat_path(const std::string& abs) {
  struct stat st {};
  if (::lstat(abs.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return {PathKind::kDir, {}};
    if (S_ISREG(st.st_mode)) return {PathKind::kFile, {}};
    return {PathKind::kOther, {}};
  }
  // Find the shallowest component that stops the path from existing: a missing one (a
  // placeholder there blocks creation), or one that exists but is not a directory (a file
  // named ".claude" where ".claude/commands" is protected: capping that file stops the
  // command from replacing it with a directory).
  std::string prefix;
  std::size_t i = 0;
  while (i < abs.size()) {
    const std::size_t next = abs.find('/', i + 1);
    prefix = abs.substr(0, next);
    if (::lstat(prefix.c_str(), &st) != 0) return {PathKind::kMissing, prefix, false};
    if (next == std::string::npos) break;
    if (!S_ISDIR(st.st_mode)) return {PathKind::kMissing, prefix, true};
    i = next;
  }
  return {PathKind::kMissing, abs, false};
}

bool has_glob_chars(std::string_view s) { return s.find_first_of("*?[") != std::string_view::npos; }

bool path_is_under(std::string_view path, std::string_view root) {
  if (root == "/") return !path.empty() && path[0] == '/';
  if (path.size() < root.size() || path.compare(0, root.size(), root) != 0) return false;
  return path.size() == root.size() || path[root.size()] == '/';
}

}  // namespace vigil
