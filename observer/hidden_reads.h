// vigil.observer.reads: telling the command when a read lands on a path denyRead hides.
//
// denyRead hides with mounts (a tmpfs over a directory, an empty file over a file), so a
// read finds nothing or an empty file and no error says why. With the setting on, every
// open/openat/openat2 goes to vigil-init (filters/notify_filter.h) and this decides
// whether the name the call resolves to lies under a hidden path; if so the observer
// sends an fs.read event, and the block gets "deny read PATH (hidden by denyRead, ...)".
//
// What is trapped, and why not more:
//  * The filter cannot be scoped to the hidden paths: BPF sees registers only, and the
//    path is a pointer into the caller's memory. Every open pays a round trip; vigil-init
//    keeps its share small (the prefix compare of read_hit_by_spelling() first).
//  * The stat family (stat, lstat, newfstatat, statx, access, faccessat, readlink) is not
//    trapped: it reveals no content, only that the name looks missing (the same answer the
//    mount gives), and it is the most frequent file call there is (`git status` and `find`
//    stat every entry), so trapping it would multiply the cost for a line that says less
//    than the open's. A tool that only tests for a name (`test -f ~/.ssh/id_x`) is not told.
//
// The answer to the call is CONTINUE: the kernel runs the open exactly as it would have
// without the trap, and the mount hides the content. That answer grants nothing, so no
// TOCTOU matters: a caller that rewrites the path between vigil-init's read and the
// kernel's can change only which line is told, never what it gets.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "observer/call_plan.h"
#include "observer/cwd_cache.h"

namespace vigil::init {

// One entry of the sandbox's read layout, from the supervisor's plan: a path hidden by a
// rule (`hides`), or a path inside a hidden one bound back in (allowRead, allowWrite).
// Absolute and symlink-resolved, as the mounts are.
struct HiddenPath {
  std::string path;
  std::string origin;  // "filesystem.denyRead[0]", "default: ..."
  bool hides = true;
};

// The entry hiding `resolved` (absolute, lexically normal): the deepest entry equal to or
// holding it, when that entry hides; nullptr when none holds it or the deepest one binds
// the path back in. Pure.
const HiddenPath* hiding_rule(const std::vector<HiddenPath>& layout, std::string_view resolved);

// The fast path, on the bytes alone: an absolute spelling whose lexical form a hiding
// entry holds names the hidden path (the entries are real paths, so nothing on the way
// to one is a symlink, and below it is the mount's empty content). nullopt when the
// spelling alone cannot tell (relative, a ".." in it, or not under a hiding entry as
// spelled: a symlink may still lead there, so the name is then resolved). Pure.
struct ReadHit {
  const HiddenPath* rule = nullptr;
  std::string resolved;
};
std::optional<ReadHit> read_hit_by_spelling(const std::vector<HiddenPath>& layout,
                                            std::string_view spelled);

// The hit for an open the caller is making, or nullopt: the spelling first, then the name
// the call resolves to in the caller's view (its cwd or dirfd, symlinks followed unless
// O_NOFOLLOW). Call while the caller waits in its call (its dirfd and cwd are read).
std::optional<ReadHit> hidden_read(const std::vector<HiddenPath>& layout, const CallPlan& plan,
                                   pid_t pid, CwdCache* cwds);

}  // namespace vigil::init
