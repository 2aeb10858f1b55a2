// srt's ignoreViolations: which violations leave the <sandbox_violations> block. They
// stay in the session log, marked with the entry that matched, and are counted. Pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "supervisor/core/policy/policy.h"

namespace vigil {

// The command as ignoreViolations patterns see it: the argv joined by single spaces
// (a `-c STRING` command is "/bin/bash -c STRING", so "git push" matches inside it).
std::string ignore_command_line(const std::vector<std::string>& argv);

// The entry that silences a violation of `target` (fs: the path; net: host:port) by
// `command`, written as `ignoreViolations["git push"]: "/usr/bin/nc"`, or "" when none
// does. As srt: a "*" entry applies to every command, another when the command line
// contains its key; a path matches when `target` contains it.
std::string ignored_by(const std::vector<IgnoreRule>& rules, std::string_view command,
                       std::string_view target);

}  // namespace vigil
