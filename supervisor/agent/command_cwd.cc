#include "supervisor/agent/command_cwd.h"

#include <stdlib.h>

#include <memory>

#include "supervisor/core/base/display_text.h"

namespace vigil {

bool cwd_within(std::string_view path, std::string_view root) {
  if (path.empty() || path[0] != '/' || root.empty() || root[0] != '/') return false;
  if (root == "/") return true;
  if (path.size() < root.size() || path.compare(0, root.size(), root) != 0) return false;
  return path.size() == root.size() || path[root.size()] == '/';
}

Result<std::string> command_cwd_in(const std::string& requested, const std::string& workspace) {
  if (requested.empty() || requested[0] != '/')
    return make_error(Errc::kRefused, "cwd: an absolute path is required");
  // realpath follows every symlink and `..` as the kernel would: the directory the
  // command would really start in.
  std::unique_ptr<char, decltype(&::free)> resolved(::realpath(requested.c_str(), nullptr), &::free);
  if (!resolved) {
    return system_error("cwd " + escape_text(requested) +
                        " cannot be used: it must be an existing directory inside this "
                        "session's workspace " +
                        escape_text(workspace));
  }
  const std::string cwd(resolved.get());
  if (!cwd_within(cwd, workspace)) {
    return make_error(Errc::kRefused,
                      "cwd " + escape_text(requested) + " is outside this session's workspace " +
                          escape_text(workspace) +
                          " (fixed when the session started): run the command in the "
                          "workspace, or start the session in the directory to work in");
  }
  return cwd;
}

}  // namespace vigil
