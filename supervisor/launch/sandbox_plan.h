// The I/O shell around the pure builders: loads the policy for the CLI, runs the
// mandatory-deny scan over every writable root, and produces the plan that both
// `vigil run` and `vigil explain` use.
#pragma once

#include <sys/stat.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#if !defined(__APPLE__)
#include "bwrap/argv_builder.h"
#endif
#include "supervisor/core/policy/policy.h"
#include "supervisor/core/fs/path_verdict.h"
#include "supervisor/core/base/result.h"

namespace vigil {

// The settings file srt reads when no --settings is given (in $HOME).
inline constexpr std::string_view kHomeSettingsName = ".srt-settings.json";

struct PlanRequest {
  std::optional<std::string> settings_path;
  // No settings_path: read ~/.srt-settings.json when it exists, as srt does.
  bool use_home_settings = true;
  bool allow_writable_settings = false;
  std::string session_tmp;  // empty for explain (no session)
  // False for a session_tmp that only stands for one (explain): it is never looked up on
  // disk, where another user could have planted a symlink at that name.
  bool resolve_session_tmp = true;
  // The workspace: what relative settings paths and a relative settings file are
  // resolved against, and the default writable root. Empty: this process's cwd.
  std::string cwd;
  // Called with the writable roots (resolved) once the policy is loaded, before the scan
  // reads anything under them: `vigil run` holds their locks there (session_dir.h).
  std::function<Result<void>(const std::vector<std::string>& roots)> before_scan;
  // Directly in each writable root, a protected name that is missing gets a placeholder
  // (an empty read-only mount) so the command cannot create it. Placeholders break
  // everyday git (`git add -A`, `git stash -u`, `git status`, `git clean -fd` all trip on
  // them), so they are for the witness-only path: where vigil-init refuses the creation
  // of protected names at the call (the gatekeeper) and the post-run backstop
  // (supervisor/backstop/backstop.h) quarantines whatever slips through, pass false. Existing
  // protected names keep their read-only binds either way.
  bool placeholders = true;
  // A denyWrite entry that does not exist yet is refused by vigil-init when it is created
  // (true where the gatekeeper is in force: gatekeeper_in_force()), instead of a
  // placeholder on its first missing component, which would block the whole parent
  // (`"denyWrite": ["config/production.json"]` with no config/ would stop `mkdir config`).
  bool refuse_missing_at_call = false;
  // A missing allowWrite directory that vigil may make (missing_roots.h) is made at
  // launch (`vigil run`, sessions); false (explain) only says that run would make it.
  bool make_missing_roots = false;
};

// Whether this host's kernel lets vigil-init perform the calls itself (5.14+: the
// gatekeeper, see observer/notify_loop.h); the same test vigil-init makes.
bool gatekeeper_in_force();

struct PreparedSandbox {
  Policy policy;
  std::vector<ProtectedPath> protected_paths;
  Plan plan;
  std::vector<std::string> warnings;  // printed to stderr by the CLI
  std::string settings_origin;        // which file was used and why ("--settings X", ...)
};

// The directory vigil was started in (getcwd) and $HOME, as the loader needs them.
Result<std::string> current_dir();

Result<PreparedSandbox> prepare_sandbox(const PlanRequest& req);

#if !defined(__APPLE__)
// The rows of kernel_masks() (bwrap/argv_builder.h) whose path exists on this host: the
// kernel-wide /proc files are the same in the sandbox's fresh /proc.
std::vector<KernelMask> present_kernel_masks();
#endif

// Missing mandatory-deny targets that bwrap will create as mount points (placeholders),
// to be removed after the session if they are still as made.
std::vector<std::string> placeholder_paths(const Plan& plan);
// vigil-init's options for the missing denyWrite targets it refuses at the call
// (`--refuse-create PATH ORIGIN` each; observer/refused_names.h).
std::vector<std::string> refuse_create_args(const Plan& plan);
// Writes the placeholders that hold something (placeholder_content()), just before bwrap
// binds them: O_EXCL, so a name that appeared since the scan is an error, never capped
// as it is.
Result<void> create_content_placeholders(const std::vector<std::string>& paths);
// True when `path` (lstat'ed as `st`) is still the placeholder as it was made: a regular
// file holding exactly placeholder_content(path).
// (SessionDir removes them: session_dir.h.)
bool is_untouched_placeholder(const std::string& path, const struct stat& st);

}  // namespace vigil
