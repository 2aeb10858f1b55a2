// A filesystem.allowWrite directory that does not exist yet (issue 38.3): `~/.npm` on a
// fresh machine. A bind mount needs its source, so such an entry cannot be a writable
// root, and a tool that would have made it (npm) then fails inside the sandbox. What a
// user expects: the directory they listed works. vigil makes it at launch when doing so
// hands nothing new to anyone: the entry lies under the user's home and the deepest
// existing directory on its way is the user's own (so the new directories are the user's
// too, with their umask), reached without following a symlink. Anything else stays
// unwritable, said once at launch with the fix (sandbox_plan.cc).
#pragma once

#include <string>
#include <string_view>

#include "supervisor/core/base/result.h"
#include "supervisor/core/policy/policy.h"

namespace vigil {

// Whether `r` (an allowWrite rule whose kind is kMissing) is one vigil makes: under
// `home` (not "/"), nothing but missing directories in the way (no file standing where
// one must go), and the existing directory its first missing component lies in owned by
// `uid`. Reads that directory's status (lstat).
bool makes_missing_root(const PathRule& r, std::string_view home, unsigned uid);

// Makes the directories from r.first_missing down to r.resolved, each with mkdirat() in
// the one before, opened with O_NOFOLLOW: a symlink planted on the way fails the make
// instead of being followed. Error: names the directory and the fix (mkdir -p).
Result<void> make_missing_root(const PathRule& r);

}  // namespace vigil
