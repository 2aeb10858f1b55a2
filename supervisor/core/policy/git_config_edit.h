// Taking keys out of a git config file and keeping the rest (issue 31, item 9): the
// backstop's quarantine of a config that gained a key off the allowlist (git_safety.h)
// removes only those keys, so that the repository keeps its remotes, branches and user
// settings. Pure: text in, text out; the caller writes the files.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "supervisor/core/base/result.h"

namespace vigil::git {

struct KeyRemoval {
  std::string kept;     // the file without the removed entries' lines, otherwise byte for byte
  std::string restore;  // the removed entries under their section headers: appended to a
                        // config, it puts them back
  std::vector<std::string> lines;  // each removed line as it was written (without "\n")
};

// Removes every entry whose canonical key (ConfigEntry::key(), "core.hookspath") is in
// `keys`. Refused (the caller then moves the whole file) when the text does not parse,
// when a key shares its line with a section header, or when what is left would not read
// back as exactly the other entries.
Result<KeyRemoval> remove_config_keys(std::string_view text, const std::vector<std::string>& keys);

}  // namespace vigil::git
