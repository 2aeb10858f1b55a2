// Protected names at every depth, at the call: creating, or renaming into, a
// mandatory-deny name (supervisor/core/policy/mandatory_denies.h: .bashrc, .mcp.json, .vscode/,
// .claude/commands/, .gitmodules, ...) anywhere under a writable root is refused with
// EACCES before vigil-init performs the call. The names inside .git (hooks, config,
// commondir) are left to the git rules, which judge what git itself must be able to
// write (git init makes .git/hooks/*.sample; git config writes .git/config): the seam
// for them is observer/git_rules.h.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "observer/mount_table.h"

namespace vigil::init {

// Why creating the name `path` (absolute, real: its parent resolved) is refused, or ""
// when it is not. A path on a read-only mount is not refused here: the kernel does
// (EROFS). Pure.
std::string protected_name_refusal(const std::vector<Mount>& mounts, std::string_view path);

}  // namespace vigil::init
