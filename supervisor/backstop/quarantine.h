// The quarantine: where the backstop (backstop.h) moves what it found, outside every
// sandbox and every writable root, so that nothing on the host acts on it and the user
// can put it back.
//
// <state>/vigil/quarantine/<session id>/ ($XDG_STATE_HOME, else ~/.local/state), private
// (0700, created like the log's directory). Each offender is renamed to a plain number
// ("1", "2", ...), so no name in the quarantine is one a tool acts on (.git, .vscode,
// .bashrc), and manifest.jsonl holds one JSON line per item:
//   {"n":1,"path":"/w/r/.git/hooks/post-checkout","rule":"git-hook","reason":"...",
//    "moved_to":"<dir>/1"}
// To restore: mv <moved_to> <path>.
//
// A git config that gained keys off the allowlist is not moved: only those keys' lines
// are taken out of it (git_config_edit.h), the rest (remotes, branches, user settings)
// stays, so the repository keeps working. <dir>/<n> then holds the removed lines under
// their section headers, and the manifest line says "removed" (the lines) instead:
//   {"n":2,"path":"/w/r/.git/config","rule":"git-config",...,"moved_to":"<dir>/2",
//    "removed":["\thooksPath = .husky"]}
// To restore: append <moved_to> to <path> (`vigil undo --quarantined LOG` does).
#pragma once

#include <string>
#include <vector>

#include "supervisor/backstop/backstop.h"
#include "supervisor/core/base/result.h"

namespace vigil {

// The quarantine directory of session `id` (not created): error when neither
// XDG_STATE_HOME nor HOME is an absolute path.
Result<std::string> quarantine_dir_for(const std::string& id, const char* xdg_state_home,
                                       const char* home);

struct QuarantineResult {
  Offender offender;
  std::string moved_to;  // "" when it could not be moved
  std::string error;     // why not
  // Only these lines were taken out of the file (offender.keys); `restore` puts them back.
  std::vector<std::string> removed = {};
  std::string restore = {};
};

// Creates `dir` (private) and moves each offender into it, in order, never following a
// symlink at the offender's own name. A cross-filesystem move is a copy (files, dirs,
// symlinks; special files are left out) and then the removal of the original.
std::vector<QuarantineResult> quarantine(const std::vector<Offender>& offenders,
                                         const std::string& dir);

}  // namespace vigil
