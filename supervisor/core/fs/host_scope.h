// Which names a sandbox could write on the HOST (issue 31, item 4). A command's records
// name paths in the sandbox's view; only those below a writable root bound from the host
// are the host's. The sandbox's own trees (its /dev and /dev/shm, /proc, the session temp
// dir, the tmpfs a denyRead puts over a directory, /dev/null over a file) are fresh
// mounts: the same name on the host is a file the session never touched. Change capture,
// `replay --changes/--diff` and `vigil undo` act on a path only when in_host_scope() says
// so; the scope is recorded in session.start (sealed) so that undo reads it from the log.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "supervisor/core/policy/policy.h"

namespace vigil {

struct HostScope {
  std::vector<std::string> writable;     // host directories (or files) bound read-write
  std::vector<std::string> sandbox_own;  // trees the sandbox made itself: never the host's
  bool operator==(const HostScope&) const = default;
};

// Trees every bwrap sandbox makes fresh, whatever the policy (bwrap/argv_builder.cc).
inline constexpr std::string_view kSandboxOwnTrees[] = {"/dev", "/proc"};

// The scope of a policy as the sandbox plan mounts it: every allowWrite root that exists
// (not the session temp dir) is the host's; /dev, /proc, every denyRead path, the session
// temp dir and `session_base` (where every session directory lives) are not.
HostScope host_scope_of(const Policy& policy, const std::string& session_base);

// The scope assumed for a log that recorded none (written before scopes were): anything
// but the sandbox's fixed own trees and `session_base`.
HostScope legacy_host_scope(const std::string& session_base);

// `path` (absolute) is below a writable root, and no deeper (or equal) own tree covers it.
// A path that is not lexically normal ("..", ".", "//") is never in scope: records name
// canonical paths, so such a name is forged.
bool in_host_scope(const HostScope& scope, std::string_view path);

// `path` is `dir` or below it (both absolute, normal).
bool path_within(std::string_view path, std::string_view dir);

}  // namespace vigil
