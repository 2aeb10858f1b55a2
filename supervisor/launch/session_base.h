// Where session directories live (<base> in supervisor/command/session_dir.h, which makes
// and sweeps them): $XDG_RUNTIME_DIR/vigil when that directory is ours, else vigil-UID in
// the shared temp dir. Here, below both, because the session makes them and replay
// recognises a session temp dir in an older log by it.
#pragma once

#include <string>

namespace vigil {

// The shared temp dir: $TMPDIR when it is absolute, else /tmp.
std::string shared_tmp();

// <base>; `shared` says whether it is in the shared temp dir (where another user may have
// taken the name first).
std::string session_base(bool* shared);

// <base>: where every session directory of this user lives.
std::string session_base_dir();

}  // namespace vigil
