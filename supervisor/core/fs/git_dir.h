// Repository-ness as git decides it (git's setup.c: is_git_directory, validate_headref,
// get_common_dir, read_gitfile_gently), and what in a repository makes git run a program.
// One home for both the gatekeeper (observer/git_rules.h, at the call) and the post-run
// backstop (supervisor/backstop/backstop.h), so that they, `vigil explain` and git agree.
//
// A directory is a git directory when
//   - its HEAD is a symlink whose text starts with "refs/", or a file (any link followed)
//     whose first bytes are "ref:" + spaces + "refs/..." or a hex object id; and
//   - in its common directory (the one its `commondir` file names, relative to it, or
//     itself), `objects` and `refs` can be searched (access X_OK: symlinks followed).
// git discovers a repository from a directory D as D/.git (a directory, a symlink to one,
// or a file "gitdir: PATH", PATH relative to D) or as D itself (a bare repository), then
// from each parent of D in turn.
//
// I/O through dirfds; never follows a symlink the caller did not ask for, except where git
// itself does (HEAD's target, objects and refs). Thread-safe (no state).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "supervisor/core/base/unique_fd.h"

namespace vigil::git {

// git's validate_headref on `dir_fd`/HEAD.
bool valid_head(int dir_fd);

// git's is_git_directory on the directory open at `dir_fd`.
bool is_git_directory(int dir_fd);

// The signature names whose arrival can turn a directory into a repository.
bool is_signature_name(std::string_view name);  // HEAD, objects, refs, commondir

// Whether the directory at `dir_fd` will be a repository once `adding` (a signature
// name) exists in it, whatever that name's content turns out to be: the other signatures
// are there (HEAD in any form: its bytes may still be written). Conservative.
bool would_be_git_directory(int dir_fd, std::string_view adding);

// Reads a regular file `name` under `dir` (a final symlink followed only with `follow`)
// of at most `max` bytes; false when it cannot be read, is not a regular file or holds
// more. O_NONBLOCK: a FIFO planted under the name never holds the reader.
bool read_bounded(int dir, const char* name, std::size_t max, bool follow, std::string* out);

// The common directory of the git directory at `dir_fd`: what its commondir names (an
// fd; none when it cannot be opened), or a duplicate of `dir_fd` when it has none.
UniqueFd open_common_dir(int dir_fd);

// The git directory the `.git` entry of `parent_fd` names, as git reads it: a directory
// (through symlinks) or a "gitdir: PATH" file. No fd when there is none.
UniqueFd open_dot_git(int parent_fd);

// One thing in a repository that makes git run a program.
struct Danger {
  std::string name;    // relative to the git directory: "config", "hooks/pre-commit"
  std::string rule;    // "git-config", "git-hook"
  std::string reason;  // one line, for the block and the log
};

// Everything in the git directory at `dir_fd` (and, for hooks and config, its common
// directory when that is no repository yet) that runs a program, whatever its age: a config key off the allowlist
// (config, config.worktree; supervisor/core/policy/git_safety.h), a hooks entry that is
// not an inert *.sample, a hooks or config that is not a regular file / directory. Stops
// after `max` findings.
std::vector<Danger> repo_dangers(int dir_fd, std::size_t max = 8);

}  // namespace vigil::git
