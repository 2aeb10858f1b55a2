// "The session cannot rewrite its own log", decided once for both platforms: which of the
// log's names the sandbox must not write. Linux binds it read-only (bwrap); macOS denies
// it in the Seatbelt profile. Pure: the caller resolves the log's path first.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "supervisor/core/fs/path_verdict.h"

namespace vigil {

struct LogGuard {
  std::string path;  // the log's directory, or the log file itself
  bool is_dir = true;
};

// None when the plan already denies writes to the log's directory (the default state
// dir, outside every writable root); else its directory (earlier logs beside it are
// protected too); or the file alone when that directory holds a writable root (a log in
// the workspace itself), whose mount point cannot then be unlinked or renamed away either.
// `log_file`: absolute and symlink-resolved.
std::optional<LogGuard> log_guard(const Plan& plan, const std::vector<PathRule>& allow_write,
                                  std::string_view log_file);

// The denyWrite rule for a guard, as a settings entry would spell it (origin "session log").
PathRule log_guard_rule(const LogGuard& guard);

}  // namespace vigil
