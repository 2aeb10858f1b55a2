#include "observer/refused_names.h"

#include "supervisor/core/policy/glob.h"
#include "supervisor/core/policy/path_expand.h"

namespace vigil::init {

std::string refused_name_refusal(const std::vector<RefusedName>& refused, std::string_view name,
                                 Emulation call) {
  if (name.empty() || name[0] != '/') return {};
  // Only a rename or a symlink can bring a whole tree into place at once.
  const bool brings_tree = call == Emulation::kRename || call == Emulation::kSymlink;
  for (const auto& r : refused) {
    if (name == r.path) {
      return "write-denied by " + r.origin + " (it does not exist yet: creating it is refused)";
    }
    if (brings_tree && path_is_under(r.path, name)) {
      return "write-denied by " + r.origin + ": " + std::string(name) + " would hold the denied " +
             r.path + "; only an empty directory may be made there (mkdir)";
    }
  }
  return {};
}

std::string refused_glob_refusal(const std::vector<RefusedGlob>& globs, std::string_view name) {
  if (name.empty() || name[0] != '/') return {};
  for (const auto& g : globs) {
    if (glob_match(g.pattern, name)) {
      return "denied by " + g.origin +
             ": a name the glob matches cannot be created after launch (refused at the call)";
    }
  }
  return {};
}

}  // namespace vigil::init
