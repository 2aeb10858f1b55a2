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
#include "supervisor/core/events/syscall_table.h"

namespace vigil::init {

// Why creating the name `path` (absolute, real: its parent resolved) is refused, or ""
// when it is not. A path on a read-only mount is not refused here: the kernel does
// (EROFS). `from`: a rename's source (its real name), whose content the new name gives a
// meaning to; `call`: what makes the name. Pure on the names; the git rules
// (observer/git_rules.h) look at the files for the few names they are about.
std::string protected_name_refusal(const std::vector<Mount>& mounts, std::string_view path,
                                   std::string_view from = {},
                                   Emulation call = Emulation::kOpen);

}  // namespace vigil::init
