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

#include "supervisor/core/syscall_table.h"

namespace vigil::init {

struct RefusedName {
  std::string path;    // absolute, real
  std::string origin;  // "filesystem.denyWrite[0]"
};

// Why creating `name` with a call of kind `call` is refused, or "" when it is not.
std::string refused_name_refusal(const std::vector<RefusedName>& refused, std::string_view name,
                                 Emulation call);

}  // namespace vigil::init
