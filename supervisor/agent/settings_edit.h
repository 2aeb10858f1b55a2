// The one edit vigil makes to a settings file: an "always" answer in ask mode adds a
// `host:port` entry to network.allowedDomains. The rest of the file is kept byte for byte
// (the entry is inserted into the text, not re-serialised: key order, spacing and the
// user's other entries stay as written), and the file is replaced atomically.
#pragma once

#include <string>
#include <string_view>

#include "supervisor/core/base/result.h"

namespace vigil {

// The settings text with `entry` first in network.allowedDomains (the array, or the
// "network" object, made when missing). Unchanged when the entry is already there.
// Errc::kInvalidPolicy when `text` is not a settings object. Pure.
Result<std::string> add_allowed_domain(std::string_view text, const std::string& entry,
                                       std::string_view source);

// Reads `path`, adds the entry, and replaces the file atomically (a temporary file in the
// same directory with the same mode, fsync, rename): a reader sees the old file or the
// new one, never a half. The result is checked to parse before it replaces anything.
Result<void> add_allowed_domain_to_file(const std::string& path, const std::string& entry);

}  // namespace vigil
