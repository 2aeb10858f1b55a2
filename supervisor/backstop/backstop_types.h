// The backstop's inputs and findings (backstop.h), in a header of their own: the walk
// (backstop.cc) and its git judgement (backstop_repo.h) both take them.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "supervisor/backstop/change_clock.h"

namespace vigil {

struct BackstopSnapshot {
  // Taken before the command can run: CLOCK_REALTIME, or a floor stamp (change_clock.h),
  // after which every change is stamped at or after it already.
  ChangeStart start;
  // Config files that existed at launch -> the unsafe keys they held then.
  std::map<std::string, std::vector<std::string>> unsafe_at_launch;
};

struct Offender {
  std::string path;    // absolute
  std::string rule;    // a protected name (".vscode"), "git-hook", "git-config", ".git"
  std::string reason;  // one line: why it matters
  // git-config: the keys it gained off the allowlist (canonical). The quarantine takes
  // out only their lines and keeps the rest of the file (quarantine.h).
  std::vector<std::string> keys = {};
};

struct BackstopInputs {
  std::vector<std::string> roots;  // writable roots, absolute, symlink-resolved
  // Resolved paths the session's allowed fs.write records name (targets and rename
  // sources' destinations alike).
  std::vector<std::string> written;
  // Resolved destinations of the session's renames.
  std::set<std::string> renamed_into;
  // Paths never to report: vigil's own placeholders.
  std::set<std::string> skip;
};

}  // namespace vigil
