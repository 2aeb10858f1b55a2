// denyWrite targets that do not exist yet, refused when they are created.
//
// A mount cannot stand where nothing exists without blocking the whole missing parent
// (a placeholder on `config` for "config/production.json"). Where vigil-init performs the
// calls itself (the gatekeeper) it refuses, at the call, any call that would make the
// denied name exist:
//  * creating the name itself, whatever the call (open with O_CREAT, mkdir, mknod, link,
//    symlink, rename onto it);
//  * a rename or a symlink onto one of its missing ancestors: a directory moved or linked
//    into place could carry the denied name along. mkdir of an ancestor stays allowed
//    (an empty directory holds nothing), as do open, mknod and link (they make files).
// Paths are absolute and real (the supervisor resolved them; the gate's name has its
// parent resolved). Pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "supervisor/core/events/syscall_table.h"

namespace vigil::init {

struct RefusedName {
  std::string path;    // absolute, real
  std::string origin;  // "filesystem.denyWrite[0]"
};

// Why creating `name` with a call of kind `call` is refused, or "" when it is not.
std::string refused_name_refusal(const std::vector<RefusedName>& refused, std::string_view name,
                                 Emulation call);

// A filesystem.denyRead/denyWrite glob ("**/.env", "*.pem"): the supervisor expanded it at
// launch for what existed (those matches are mounts); a name created later that it
// matches is refused here, at the call, whatever the call (open with O_CREAT, mkdir,
// mknod, link, symlink, rename onto it). The pattern is absolute with its base's symlinks
// resolved (supervisor/core/policy/glob.h: real_glob_pattern), as the name is.
// Not covered: a directory moved (rename) into place that already holds a matching name
// deeper down; telling would mean walking the moved tree at every directory rename. The
// next launch's expansion hides such a name.
struct RefusedGlob {
  std::string pattern;  // absolute, real base: "/ws/**/.env"
  std::string origin;   // "filesystem.denyRead[0] \"**/.env\""
};

// Why creating `name` is refused by a glob, or "" when no glob matches it.
std::string refused_glob_refusal(const std::vector<RefusedGlob>& globs, std::string_view name);

}  // namespace vigil::init
