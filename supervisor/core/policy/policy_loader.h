// Settings file -> Policy. Reads Anthropic sandbox-runtime's format unchanged, plus
// vigil's own options under "vigil". Strict: unknown keys, wrong types, duplicate keys
// and settings we do not implement are errors naming the file, the position, the JSON
// path and (for typos) the nearest valid key. Nothing is silently ignored: settings that
// are meaningless on this platform are accepted with a warning in Policy::warnings.
#pragma once

#include <string>
#include <string_view>

#include "supervisor/core/policy/load_context.h"
#include "supervisor/core/policy/policy.h"
#include "supervisor/core/policy/policy_keys.h"
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/core/base/result.h"

namespace vigil {

// Parses settings text. `source` names it in messages (normally the file path).
Result<Policy> parse_policy(std::string text, std::string_view source, const LoadContext& ctx);

// Reads and parses a settings file (a missing or unreadable file is an error, never a
// fallback to the default).
Result<Policy> load_policy_file(const std::string& path, const LoadContext& ctx);
// The same from an fd opened with open_regular_file() (supervisor/core/base/regular_file.h):
// what is parsed is what the caller checks. `source` names it in messages.
Result<Policy> load_policy_fd(int fd, const std::string& source, const LoadContext& ctx);
// Opens a settings file for load_policy_fd: a file that does not exist is input the user
// must fix (Errc::kInvalidPolicy, exit 2), never a fallback to the default policy.
Result<UniqueFd> open_settings_file(const std::string& path);

// The embedded default: cwd writable, everything else read-only, mandatory denies on,
// no network.
Policy default_policy(const LoadContext& ctx);

}  // namespace vigil
