// `vigil undo`'s executor (issues 17, 32): the host side of the plan in undo_plan.h. It
// looks at what each path is now (look_on_host), checks the content store holds every
// pre-image (store_check), and carries out one checked step (apply_step).
//
// Every path is reached without following a symlink on the way (openat2
// RESOLVE_NO_SYMLINKS on its parent, then *at calls on the last name, which never follow
// it), so a link planted after the session cannot send a restore elsewhere. Files are
// written to a fresh name beside the target and renamed over it.
#pragma once

#include <cstdint>
#include <string>

#include "supervisor/backstop/undo_plan.h"
#include "supervisor/core/base/result.h"
#include "supervisor/core/events/stored_content.h"

namespace vigil::undo {

// The largest pre-image undo reads back (whole, in memory, to check its hash).
inline constexpr std::uint64_t kMaxRestoreBytes = std::uint64_t{1} << 30;

// What is at `path` now, taken without following any symlink on the way.
HostState look_on_host(const std::string& path);

// The plan's check: the store holds the image's content, whole and matching its hash.
CheckFn store_check(const StoredContentFn& read);

// Carries out one step (made by make_plan, checked). The content of a restore is read
// again and checked against its hash; a store changed since the check fails the step.
Result<void> apply_step(const Step& s, const StoredContentFn& read);

}  // namespace vigil::undo
