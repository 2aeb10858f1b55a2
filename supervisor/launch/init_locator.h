// Finds vigil-init and makes sure the sandbox could not have tampered with it: a copy
// inside a writable root would let one session plant code that runs as PID 1 of the next.
#pragma once

#include <string>

#include "supervisor/core/fs/path_verdict.h"
#include "supervisor/core/base/result.h"

namespace vigil {

// vigil-init next to the vigil binary, in ../libexec/vigil/, or (a build tree) in
// ../observer/. Returns its symlink-resolved path.
Result<std::string> locate_vigil_init();

// Another of vigil's own binaries (`name`: "vigil-export") next to vigil or in
// ../libexec/vigil/. Returns its symlink-resolved path.
Result<std::string> locate_vigil_helper(const std::string& name);

// Refuses a binary that the plan leaves writable, or whose directory it leaves writable
// (a rename would replace it).
Result<void> check_not_writable(const Plan& plan, const std::string& binary);

}  // namespace vigil
