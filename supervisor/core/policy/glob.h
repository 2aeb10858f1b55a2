// Deny globs (filesystem.denyRead/denyWrite entries such as "**/.env" or "~/.ssh/*.pem"):
// the matcher, pure, and the launch-time expansion over what exists, which the plan
// mounts over like any listed path. A name created after launch is not a mount: refusing
// it needs a check at the call, which calls glob_match() with the same pattern
// (GlobRule::pattern) on the path the call resolves to.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace vigil {

// Whole-path match of an absolute `path` against an absolute `pattern`, component by
// component: "*" is any run of characters within one component, "?" one character,
// "[abc]"/"[a-z]"/"[!x]" one from a set, and a component that is exactly "**" any number
// (zero included) of components. "*" and "?" match a leading "." too (as srt's globs do:
// "*.pem" must catch ".key.pem"). A pattern ending in "/" matches nothing.
bool glob_match(std::string_view pattern, std::string_view path);

// The directory below which every match lies: the pattern's components before the first
// one holding a glob character.
std::string glob_base(std::string_view pattern);

// `pattern` with its glob_base()'s symlinks resolved ("/home/u/**/.env" with /home/u a
// link to /data/u: "/data/u/**/.env"): what real paths, such as vigil-init's at the call,
// are matched against.
std::string real_glob_pattern(std::string_view pattern);

struct GlobLimits {
  int max_depth = 10;                // components below glob_base()
  std::size_t max_entries = 200000;  // directory entries read, in all
};

struct GlobExpansion {
  std::vector<std::string> matches;     // sorted, absolute
  bool truncated = false;               // a limit was hit: matches is partial
  std::vector<std::string> unreadable;  // directories that could not be listed
};

// The existing paths `pattern` matches, walking from glob_base() (symlinks are matched
// as names, never followed into).
GlobExpansion expand_glob(std::string_view pattern, const GlobLimits& limits = {});

}  // namespace vigil
