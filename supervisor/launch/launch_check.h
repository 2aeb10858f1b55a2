// The launch check: the supervisor compares the mount table bwrap built with the plan
// before anything in the sandbox runs (bwrap waits on --block-fd until it is released).
//
// Why from outside and before the release: bwrap resolves every mount's source and
// destination by path, following symlinks. A command of another session sharing the
// workspace can swap a path for a symlink between those two resolutions, and the bind
// then lands anywhere, vigil-init's own binary included. A check inside the sandbox runs
// in whatever was mounted there; this one runs in the supervisor, on the table of the
// sandbox's mount namespace (/proc/PID/mountinfo), while bwrap is still blocked.
//
// Every mount in the table must be accounted for: at a planned destination, one of the
// device nodes bwrap's --dev makes, or a host mount that a planned (recursive) bind
// carried along, found at the same place below the bind's source in the host's own
// table with the same filesystem and root. Each planned writable mount must hold the
// directory the supervisor saw on the host (device, inode). Pure but for `identity`.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bwrap/argv_builder.h"
#include "observer/mount_table.h"
#include "supervisor/core/fs/expected_mounts.h"
#include "supervisor/core/base/result.h"

namespace vigil {

struct PlannedMount {
  enum class Kind {
    kBind,   // --bind, --ro-bind, --dev-bind (recursive: host submounts come along)
    kDev,    // --dev: a tmpfs with bwrap's device nodes and devpts
    kFresh,  // --tmpfs, --proc, --mqueue: nothing from the host below it
  };
  Kind kind = Kind::kBind;
  std::string source;  // binds only
  std::string dest;
  bool writable = false;
  bool operator==(const PlannedMount&) const = default;
};

// The mounts the argv asks bwrap for, in its order. Options that mount nothing are
// skipped; the command (after "--") is not read.
std::vector<PlannedMount> planned_mounts(const std::vector<BwrapArg>& args);

// True once the table is the one the command would get: bwrap has pivoted into the new
// root (no /newroot or /oldroot is left in the table) and the last planned mount is
// there. Until then bwrap is still building, and the table is read again on its next
// change.
bool table_is_final(const std::vector<init::Mount>& sandbox, std::string_view last_dest);

// (device, inode) of a path inside the sandbox, or nullopt.
using SandboxIdentity =
    std::function<std::optional<std::pair<std::uint64_t, std::uint64_t>>(const std::string&)>;

struct LaunchTables {
  std::span<const PlannedMount> planned;
  std::span<const ExpectedMount> writable;  // the planned writable mounts, as on the host
  const std::vector<init::Mount>* sandbox = nullptr;
  const std::vector<init::Mount>* host = nullptr;
};

// Errc::kRefused naming the first mount that breaks the plan, and why.
Result<void> check_launch_table(const LaunchTables& t, const SandboxIdentity& identity);

}  // namespace vigil
