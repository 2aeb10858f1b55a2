// Seatbelt profile + command -> the exact argv of /usr/bin/sandbox-exec. Pure: tested on
// Linux, used on macOS by supervisor/orchestrator/seatbelt_backend.cc (posix_spawn, never a shell).
//
//   /usr/bin/sandbox-exec -p PROFILE -D NAME=VALUE ... -- COMMAND ARGS...
//
// How each hostile input is handled, and why:
//   * A parameter VALUE reaches sandbox-exec as the tail of its own argv element
//     "NAME=VALUE". NAME is ours ([A-Z0-9_], checked), so the element never starts with
//     '-' (no option can be smuggled in, whatever the value starts with) and its first
//     '=' is the one we wrote (a value containing '=' stays whole). Newlines, quotes and
//     parentheses are passed as they are: values are never parsed as profile text.
//   * NUL anywhere (profile, value, command) is REJECTED: argv elements are C strings,
//     so "/proj\0/x" would silently become "/proj", a different and wider rule.
//   * An empty value is rejected: what `(subpath "")` means to Seatbelt is not
//     documented, and no rule of ours produces one.
//   * The profile must use exactly the declared parameters: a `(param "X")` without its
//     -D has no documented value, and a -D the profile never reads is a builder bug.
//     Duplicate names are rejected (which one sandbox-exec keeps is not documented).
//   * The command follows "--", so a command named "-f" or "-p" is the command, not an
//     option (sandbox-exec parses its options with getopt(3), which stops at "--").
//     An empty command, or an empty command name, is rejected.
//   * The whole argv must fit well inside macOS's ARG_MAX (1 MiB for argv and the
//     environment together): a huge profile is refused here with a message, instead of
//     an opaque E2BIG from posix_spawn.
// Thread-safe (no shared state).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "seatbelt/profile_builder.h"
#include "supervisor/core/base/result.h"

namespace vigil {

inline constexpr const char* kSandboxExecPath = "/usr/bin/sandbox-exec";

// Bytes of argv (strings, their NULs and the pointer array) we allow ourselves; the
// other half of ARG_MAX is left to the environment.
inline constexpr std::size_t kSandboxExecArgvBudget = 512 * 1024;

// Errors: Errc::kInternal for a malformed profile (undeclared, unused or duplicate
// parameter; bad name; empty or NUL-carrying value: the builder never makes one),
// Errc::kInvalidPolicy for what the user controls (the command; a profile too large for
// ARG_MAX, which many settings paths can cause).
Result<std::vector<std::string>> sandbox_exec_argv(const SeatbeltProfile& profile,
                                                   const std::vector<std::string>& command);

// The parameter names a profile text reads, `(param "NAME")`, in first-use order
// (exposed for the tests). Errc::kInternal when a reference is not closed.
Result<std::vector<std::string>> profile_param_refs(std::string_view text);

}  // namespace vigil
