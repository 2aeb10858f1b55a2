// The names that are write-denied even inside a writable root, because each of them
// makes some program run code later, outside the sandbox (a login shell, git, an
// editor, an agent harness). One list, shared by the bwrap and Seatbelt builders,
// the resolver and `vigil explain`.
#pragma once

#include <span>
#include <string_view>

namespace vigil {

enum class DenyShape { kFile, kDir };

struct MandatoryDeny {
  std::string_view relpath;  // relative to the directory it is found in ("a" or "a/b")
  DenyShape shape;
  std::string_view why;
  bool git_config = false;  // lifted by filesystem.allowGitConfig
  // What vigil writes into the placeholder for this name when it is missing at launch;
  // empty: the placeholder is bwrap's /dev/null bind (see placeholder_content()).
  std::string_view placeholder = {};
};

// All entries, in the order `vigil explain` prints them.
std::span<const MandatoryDeny> mandatory_denies();

// The first path component of every entry (".bashrc", ".git", ".claude", ...): the
// scanner matches directory entries against these and nothing else.
bool is_mandatory_deny_head(std::string_view name);

// The entry whose relpath is exactly `relpath`; nullptr when none.
const MandatoryDeny* mandatory_deny_named(std::string_view relpath);

// What the placeholder for the missing protected name at `path` holds: the `placeholder`
// of the entry `path` ends with, empty (bwrap's /dev/null bind) for most.
std::string_view placeholder_content(std::string_view path);

// The entry that `rel`, a path relative to the writable root it lies in ("a/b/.vscode/x"),
// is or lies under, at any depth: a run of its components equal to an entry's relpath (a
// kDir entry covers itself and everything below it, a kFile entry only itself). With
// `allow_git_config`, .git/config is no entry. nullptr when none. Pure.
const MandatoryDeny* mandatory_deny_within(std::string_view rel, bool allow_git_config);

}  // namespace vigil
