// Removes a directory tree, whatever the command left in it: no depth limit (it keeps one
// descriptor and the names on its way down, never a path, so a tree far deeper than
// PATH_MAX goes too, where nftw failed with ENAMETOOLONG and left the session directory
// for good), never following a symlink, never crossing into another filesystem, and
// opening up directories the command made unreadable or unwritable (chmod 000).
// Used for the session directory and for the sweep of stale sessions (session_dir.h).
#pragma once

#include <string>

#include "supervisor/core/base/result.h"

namespace vigil {

// `path` itself may be a directory or anything else (removed as it is); a missing path
// is not an error.
Result<void> remove_tree(const std::string& path);

}  // namespace vigil
