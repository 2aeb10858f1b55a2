// The seam between the gatekeeper and the git rules (a pure judge of the names inside a
// repository and of the git config bytes that are about to be installed, owned by that
// work): vigil-init asks it before creating or renaming into a name inside a `.git`
// under a writable root. "" lets the call go on; a reason refuses it with EACCES.
// Until the git rules are in, it refuses nothing: a repository's existing config, hooks
// and commondir keep their read-only mounts (the mandatory-deny table), and a new one's
// are told as `unguarded`, exactly as before the gatekeeper.
#pragma once

#include <string>
#include <string_view>

namespace vigil::init {

// `rel_in_root`: the name relative to its writable root ("sub/.git/hooks/post-checkout").
std::string git_write_refusal(std::string_view rel_in_root);

}  // namespace vigil::init
