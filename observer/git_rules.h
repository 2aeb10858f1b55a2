// The git rules at the call: what a name comes to mean to git (and to the agent
// harnesses whose protected directories have more than one component) once the call that
// makes it is done. Asked by protected_name_refusal() (observer/protected_names.h) before
// vigil-init creates or renames into a name under a writable root; "" lets the call go
// on, a reason refuses it with EACCES.
//
// Repository-ness is git's own (supervisor/core/fs/git_dir.h), so every git directory is
// the top .git: a submodule's (.git/modules/NAME), a worktree's (.git/worktrees/NAME), a
// bare repository, a gitdir file's target.
//   - a hook (any name but git's own *.sample) made in the hooks directory of any git
//     directory, new or old, is refused;
//   - a signature name (HEAD, objects, refs, commondir) whose arrival turns a directory
//     into a repository is refused when what the directory already holds, whatever its
//     age, would make git run a program (a config key off the allowlist, a hook);
//   - a config renamed into a git directory (git's config.lock, then rename) is refused
//     when it adds a key off the allowlist that the config it replaces did not hold; a
//     config made by a link is refused;
//   - a directory renamed to `.git` or into a git directory's `hooks` is judged on what
//     it holds; a symlink named `.git` (git follows it to a repository vigil cannot judge
//     at the call) is refused;
//   - a directory renamed to the head of a protected name with more components
//     (`.claude`, holding `commands/`) is refused when it holds the rest.
// The same rules judge a change to a file that is there already (written in place through
// an open, truncated, its mode changed: observer/emulate*.cc), for the names that
// git_may_judge_change() picks, and the source of a hard link (a second name for a hook
// or a config would let writes reach it where no rule looks):
//   - a config of a git directory is written in place, linked or made a symlink: refused
//     (git writes one only through config.lock and a rename, judged above);
//   - an entry of a git directory's hooks: any change refused, as its making is.
// What the gate cannot see at the call (the bytes written into a .git file, a commondir or
// a config after it is made, or through an fd held across the rename) is the post-run
// backstop's (supervisor/backstop/backstop.h).
#pragma once

#include <string>
#include <string_view>

#include "supervisor/core/events/syscall_table.h"

namespace vigil::init {

// Pure, on names alone. `rel_in_root`: the name relative to its writable root
// ("sub/.git/hooks/post-checkout"), one the mandatory-deny table puts under `.git/` (or
// `.gitmodules`).
std::string git_write_refusal(std::string_view rel_in_root);

// With I/O in vigil-init's view (which is the caller's: every call that makes a name is
// performed by this thread, so nothing changes what is judged before the call is done).
// `path`: the real name the call makes (absolute); `rel_in_root`: the same relative to
// its writable root; `from`: a rename's source, real name ("" for other calls); `call`:
// what makes it.
std::string git_meaning_refusal(std::string_view path, std::string_view rel_in_root,
                                std::string_view from, Emulation call);

// Whether a change to the existing file `path` (a real name) may be one the rules above
// refuse: a config's name, or an entry of a directory named hooks. Names alone, so that
// a rewrite of any other file costs a string compare, not a judgement.
bool git_may_judge_change(std::string_view path);

}  // namespace vigil::init
