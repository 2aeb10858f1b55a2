// `vigil undo --quarantined LOG`: puts back what the post-run backstop took out of the
// writable roots in that session (quarantine.h): the lines removed from a config file are
// appended to it again, a moved item is moved back to its name if nothing is there now.
// The caller has verified the log (sealed with this user's key, or --unsealed).
#pragma once

#include <string>

#include "supervisor/core/fs/host_scope.h"
#include "supervisor/replay/replay_feed.h"

namespace vigil {

// `scope`: the session's (session.start), acted on only inside it; `quarantine_dir`: the
// session's quarantine, the only place a moved item is taken from. 0 when every item was
// put back (or there was none), 1 otherwise.
// `quarantine_dir`: <state>/vigil/quarantine/<session>; an agent session's command N
// quarantines into <session>-<N> beside it, which counts as the session's too.
int undo_quarantined(const replay::Feed& feed, const std::string& session, const HostScope& scope,
                     const std::string& quarantine_dir, bool dry_run);

}  // namespace vigil
