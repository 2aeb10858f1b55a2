// Path spelling helpers for the policy loader and the resolver. Lexical functions are
// pure; resolve_symlinks() reads the filesystem (realpath of the deepest existing ancestor).
#pragma once

#include <string>
#include <string_view>

#include "supervisor/core/policy/policy.h"
#include "supervisor/core/base/result.h"

namespace vigil {

// Collapses "//", "/./", trailing "/" and folds ".." lexically. `abs` must start with '/'.
std::string lexically_normal(std::string_view abs);

// Expands a settings path the way srt does: "~" and "~/x" against `home`, a relative
// spelling against `cwd`, then lexically_normal. Refuses an empty path, "~user", and a
// relative spelling whose ".." climbs out of `cwd` (a policy that reaches outside its
// own directory by accident is a bug worth stopping on).
Result<std::string> expand_settings_path(std::string_view written, std::string_view cwd,
                                         std::string_view home);

// realpath() of the deepest existing ancestor, with the missing remainder re-appended.
// Never fails: a path with no existing ancestor but "/" comes back lexically normalised.
std::string resolve_symlinks(std::string_view abs);

// lstat type of an absolute path, and (when missing) its first missing component.
struct PathState {
  PathKind kind;
  std::string first_missing;         // kMissing: the component that stops the path
  bool blocked_by_existing = false;  // that component exists, but is not a directory
};
PathState stat_path(const std::string& abs);

// True for '*', '?', '[' (srt reads such a spelling as a glob pattern).
bool has_glob_chars(std::string_view s);

// `path` is `root` or lies below it (component-wise: "/ab" is not under "/a").
bool path_is_under(std::string_view path, std::string_view root);

}  // namespace vigil
