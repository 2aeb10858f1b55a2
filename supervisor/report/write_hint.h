// What the model is told to do about a write the default rule refused (outside every
// writable root): the fix that would actually work for that path (issue 19.2). Pure:
// a table of tools' directories and the usual workaround for each, then the generic
// advice, which names a stable directory (never the volatile file itself, such as
// ~/.npm/_cacache/tmp/30044ce5 or /tmp/tmp.qZzQjNkAu2) and never tells the model to add
// what filesystem.allowWrite already lists.
#pragma once

#include <string>
#include <string_view>

#include "supervisor/core/policy/policy.h"

namespace vigil {

// `path`: absolute, resolved. The text goes into the fs.write event's reason.
std::string default_deny_hint(std::string_view path, const Policy& policy);

// What every refused unix socket line ends with: the model's way forward.
inline constexpr std::string_view kUnixSocketHint =
    "to allow a path, add it to network.allowUnixSockets";

// The system's own trees (/usr, /etc, /bin, ...): never worth widening the policy for.
bool is_system_path(std::string_view path);

}  // namespace vigil
