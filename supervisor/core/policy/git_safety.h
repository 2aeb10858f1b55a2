// The git-safety judge: whether a repository's config and hooks can make git run a
// program the session chose. Pure functions over bytes and names; no I/O.
//
// Config is judged against an ALLOWLIST of keys that only hold data (names, URLs, refspecs,
// booleans, paths of the work tree). Any other key -- core.fsmonitor, core.hooksPath,
// core.sshCommand, core.pager, core.editor, credential.helper, alias.*, filter/diff/merge
// drivers, include/includeIf, gpg.program, ... and every key git may grow later -- is
// unsafe. Text git could not parse is unsafe as a whole: what git would make of it is not
// ours to guess.
//
// The parser follows git's own config syntax (config.c): [section], [section "sub"] and
// the legacy [section.sub]; keys may follow a header on the same line; values with
// quotes, \-escapes and \-newline continuations; '#' and ';' comments; CRLF; a UTF-8
// BOM. Section and key names are case-insensitive, a quoted subsection is not.
//
// Hooks: git runs a hook only under its exact name ("post-checkout"), so the only entries
// a hooks directory may hold are regular files named "*.sample" (what `git init` copies
// from its templates).
//
// Used by the post-run backstop (supervisor/backstop/backstop.h) and by the gatekeeper at config
// writes. Thread-safe (no state).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "supervisor/core/base/result.h"

namespace vigil::git {

struct ConfigEntry {
  std::string section;     // lowercased ("remote")
  std::string subsection;  // as written for [s "sub"], lowercased for legacy [s.sub]
  bool has_subsection = false;
  std::string name;   // lowercased ("url")
  std::string value;  // unquoted and unescaped; "" for a bare key (boolean true)
  bool has_value = false;
  int line = 0;  // 1-based line of the key

  // The canonical key: "remote.origin.url", "core.fsmonitor".
  std::string key() const;
};

// Parses a config file as git would. Errors (Errc::kInvalidPolicy) name the line: a bad
// section header, a key before any section, a bad character, an unterminated quote, an
// unknown escape, a NUL byte.
Result<std::vector<ConfigEntry>> parse_config(std::string_view text);

// Whether `e`'s key is on the allowlist (see git_safety.cc for each entry and why).
bool is_safe_key(const ConfigEntry& e);

struct ConfigVerdict {
  bool safe = true;
  // The unsafe keys, canonical, in file order, each once ("core.fsmonitor"); or, for text
  // git cannot parse, the parse error. For the block and the log.
  std::vector<std::string> unsafe;
};

// The config file's verdict: safe when it parses and every key is on the allowlist.
ConfigVerdict judge_config(std::string_view text);

// Whether an entry of a hooks directory is inert: a regular file named "*.sample".
bool is_inert_hook(std::string_view name, bool is_regular_file);

}  // namespace vigil::git
