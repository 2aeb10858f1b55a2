// credentials.files with mode mask (srt's file masking), at one command's launch: each
// file is read here, in the supervisor, and the command gets a copy holding sentinels in
// place of the secret (the whole content, or the spans `extract` / decode "jwt" find),
// bound read-only over the real path (symlinks resolved, so every name that leads to the
// file leads to the copy). The real values go only to the proxy's TLS helper, which
// injects them into requests to the entry's injectHosts.
//
// The real bytes are never written anywhere and never enter the sandbox: a file that
// cannot be masked (no match, a directory, not UTF-8 text, over 1 MiB, unreadable) is
// hidden instead, said on stderr without a byte of it.
#pragma once

#include <string>
#include <vector>

#include "bwrap/argv_builder.h"
#include "proxy/credential_sentinels.h"
#include "supervisor/core/base/result.h"
#include "supervisor/core/fs/path_verdict.h"
#include "supervisor/core/policy/policy.h"

namespace vigil {

struct MaskedFiles {
  std::vector<BwrapInputs::FileBind> binds;  // copy -> real path
  std::vector<PathRule> hide;                // into the plan's denyRead
  std::vector<std::string> warnings;         // never a value
};

// Masks `policy`'s masked files, writing each copy into `session_dir` and adding the
// real values to `table`. A file `plan` already hides stays hidden (a deny wins). A file
// that does not exist is left alone (nothing to protect), as srt does.
Result<MaskedFiles> mask_credential_files(const Policy& policy, const Plan& plan,
                                          const std::string& session_dir,
                                          proxy::SentinelTable* table);

}  // namespace vigil
