// Places that run code later (issue 31, item 7): a file written there is a program some
// other process starts on its own (a directory on PATH, a shell's or a desktop's
// autostart, a systemd unit, a cron table, an editor's or a coding agent's settings and
// extensions, Python's user site-packages). `vigil learn` and the block's hints never
// propose making one writable, nor any directory above one (~/.local holds ~/.local/bin):
// they propose the narrowest directory the denials need, or nothing. Pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vigil {

// The absolute entries of a PATH value ("/usr/bin:/home/u/.local/bin"); relative and
// empty entries (the current directory) are left out.
std::vector<std::string> path_dirs_of(std::string_view path_value);

struct CodePlace {
  std::string dir;  // absolute
  std::string why;  // "on PATH", "systemd user units", ...
};

// Every code place for `home` (absolute; "" or "/": none under it) and the PATH
// directories `path_dirs`.
std::vector<CodePlace> code_places(std::string_view home, const std::vector<std::string>& path_dirs);

struct Narrowed {
  std::string dir;  // the directory to propose ("" = none)
  std::string why;  // none: why ("~/.config/systemd runs code later: systemd user units")
};

// From `candidate` (a directory holding `path`, or `path` itself), the narrowest directory
// on the way down to `path` that is neither in nor above a code place: deeper by one
// component of `path` at a time while `candidate` holds one. None when `path` is itself in
// a code place or no directory short of the file is clear of them. `is_dir`: `path` is a
// directory being made, so it may be the answer.
Narrowed narrow_past_code(const std::string& candidate, std::string_view path, bool is_dir,
                          const std::vector<CodePlace>& places, std::string_view home);

// The number of components of an absolute path ("/var/cache" is 2, "/" is 0).
std::size_t path_depth(std::string_view path);

}  // namespace vigil
