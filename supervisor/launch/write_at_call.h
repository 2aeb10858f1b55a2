// The write verdict `vigil run` gives a path, for `vigil explain --path` (issue 38.1):
// the mounts' (the plan, core/fs/path_verdict.h) and then, where they let the write
// through and the gatekeeper is in force, what vigil-init refuses at the call. The
// second part is not a second reading of the policy: it calls the very functions
// vigil-init's gate calls (observer/protected_names.h, observer/refused_names.h) on the
// mount table the plan becomes, so explain cannot disagree with run about a protected
// name, a git rule or a deny glob. Linux-only (vigil-init is).
#pragma once

#include <string_view>
#include <vector>

#include "observer/mount_table.h"
#include "supervisor/core/fs/path_verdict.h"
#include "supervisor/core/policy/policy.h"

namespace vigil {

// The mount table bwrap builds from `plan` as vigil-init reads it (observer/mount_table.h):
// `/` read-only, then each op in mount order (a hidden directory a tmpfs, a hidden or
// missing protected file /dev/null, a writable root or pin read-write, a re-opened or
// protected path read-only); an op refused at the call has no mount.
std::vector<init::Mount> mounts_of_plan(const Plan& plan);

// The write verdict for `path` (absolute, real): decide(plan, path, kWrite), then, when
// that allows it, `gatekeeper` holds and `path` does not exist yet (vigil-init's gate
// judges names a call creates), vigil-init's refusal at the call. Reads whether `path`
// exists (lstat).
Decision write_verdict(const Plan& plan, const FilesystemPolicy& fs, std::string_view path,
                       bool gatekeeper);

}  // namespace vigil
