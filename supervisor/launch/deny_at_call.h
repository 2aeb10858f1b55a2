// What vigil-init checks at the call, beyond the mounts, as its command-line options, and
// how explain says which form applies where. Pure.
//  * Deny globs (filesystem.denyRead/denyWrite "**/.env", "*.pem"): expanded at launch for
//    what exists (mounts), and, with the gatekeeper, a name created later that one
//    matches is refused at the call (`--refuse-glob PATTERN ORIGIN`;
//    observer/refused_names.h).
//  * vigil.observer.reads: the read layout vigil-init tells hidden reads by (`--hide PATH
//    ORIGIN`, `--show PATH ORIGIN`; observer/hidden_reads.h), and the supervisor's own
//    check of each fs.read line it sends back.
#pragma once

#include <string>
#include <vector>

#include "supervisor/core/policy/policy.h"
#include "supervisor/core/fs/path_verdict.h"
#include "supervisor/core/events/event_schema.h"

namespace vigil {

// "filesystem.denyRead[0] "**/.env"": where a glob's refusal came from, as the block says it.
std::string glob_origin(const GlobRule& g);

// `--refuse-glob PATTERN ORIGIN` for every deny glob, the pattern's base with its
// symlinks resolved (vigil-init matches real names). Only where the gatekeeper is in
// force: without it vigil-init performs no creating call, so it could refuse none.
std::vector<std::string> refuse_glob_args(const FilesystemPolicy& fs);

// One explain line per deny glob: how many existing matches the launch covered (and
// with what), and whether names created later are refused at the call (`gatekeeper`) or
// not covered at all (older kernels).
std::vector<std::string> glob_explain_lines(const FilesystemPolicy& fs, bool gatekeeper);

// `--hide PATH ORIGIN` for each path the plan hides (denyRead), and `--show PATH ORIGIN`
// for each path bound back in below one (allowRead, allowWrite). Empty when nothing is
// hidden: then there is nothing to tell, and reads need not be trapped at all.
std::vector<std::string> hidden_read_args(const Plan& plan);

// explain's line for vigil.observer.reads ("" when it is off): what is trapped and told.
std::string reads_explain_line(bool reads, const Plan& plan);

// Whether an fs.read line from the sandbox names a path the plan hides (the observer is
// inside the sandbox: its word alone puts nothing in the block). When it does, sets the
// line's reason from the plan ("hidden by denyRead, filesystem.denyRead[0]").
bool confirm_hidden_read(events::FsRead* r, const Plan& plan);

}  // namespace vigil
