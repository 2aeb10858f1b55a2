// Where an agent session's command may run. The session's workspace is fixed when the
// session starts (the directory `vigil session start`, `serve` or `mcp` was started in):
// it is the plan's writable root for every command, whatever a request says. A request's
// `cwd` only chooses where in it the command starts, and must lie inside it, judged on
// the resolved path (symlinks and `..` followed by the kernel, never a string prefix of
// the name as given): otherwise a model could name the user's home as its "workspace".
#pragma once

#include <string>
#include <string_view>

#include "supervisor/core/base/result.h"

namespace vigil {

// Pure: is the resolved path `path` the resolved directory `root` or below it? Both
// absolute, without "." / ".." components or a trailing slash (as realpath(3) gives them).
bool cwd_within(std::string_view path, std::string_view root);

// The command's cwd, resolved, when it lies inside `workspace` (itself resolved); else an
// error that names both and the fix (start the session in the directory to work in).
Result<std::string> command_cwd_in(const std::string& requested, const std::string& workspace);

}  // namespace vigil
