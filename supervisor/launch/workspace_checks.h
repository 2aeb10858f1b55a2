// What the working directory means for a session's writable roots: a warning when a root
// is the whole home directory, and the opt-in that lets git work from a subdirectory of a
// repository whose .git lies outside the writable roots (vigil.git.writableRepository).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "supervisor/core/policy/policy.h"
#include "supervisor/core/fs/path_verdict.h"

namespace vigil {

// One warning per writable root that holds the whole home directory (run from $HOME, or
// "~" in allowWrite): everything a login reads later (~/.config/autostart, ~/.ssh) is
// then writable. It names the narrower setting. Pure.
std::vector<std::string> home_root_warnings(const Policy& policy);

// The repository whose work tree holds `dir` (absolute, real): the nearest ancestor-or-self
// with a .git directory, as "<top>/.git"; nullopt when there is none. Reads the disk.
std::optional<std::string> enclosing_git_dir(const std::string& dir);

// With vigil.git.writableRepository on: when the working directory lies inside a
// repository whose .git no writable root holds, adds that .git as a writable root and its
// hooks, config and commondir as protected paths (write-denied, placeholders when
// missing; config is lifted by allowGitConfig as anywhere). Reads the disk.
void add_writable_repository(Policy* policy, std::vector<ProtectedPath>* protected_paths);

}  // namespace vigil
