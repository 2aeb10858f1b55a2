// git.safeDirectories (srt): inside the sandbox a repository owned by another uid (the
// user's own files seen from bwrap's user namespace, a checkout owned by a build user)
// makes git refuse with "detected dubious ownership". The listed directories are passed
// as git's safe.directory through the environment (GIT_CONFIG_COUNT / GIT_CONFIG_KEY_n /
// GIT_CONFIG_VALUE_n), each as itself and as "<dir>/*" (git 2.46 and later: a
// repository below it). It grants no write: the mounts and the gatekeeper decide those.
// Pure.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace vigil {

// The variables to set. `inherited_count` is the command's own GIT_CONFIG_COUNT, if it
// has one: its entries are kept and numbering continues after them. An unreadable count
// is not guessed at: the entries then start at 0 and replace it (said in explain).
std::vector<std::pair<std::string, std::string>> git_safe_directory_env(
    const std::vector<std::string>& dirs, const std::optional<std::string>& inherited_count);

// The value of NAME in a "NAME=value" list (a session's environment), or in this
// process's environment when there is no list.
std::optional<std::string> env_value(const std::optional<std::vector<std::string>>& env,
                                     const std::string& name);

// explain's line (none without directories).
std::vector<std::string> git_safe_directory_lines(const std::vector<std::string>& dirs);

}  // namespace vigil
