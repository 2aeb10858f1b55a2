// Settings file -> Policy. Reads Anthropic sandbox-runtime's format unchanged, plus
// vigil's own options under "vigil". Strict: unknown keys, wrong types, duplicate keys
// and settings we do not implement are errors naming the file, the position, the JSON
// path and (for typos) the nearest valid key. Nothing is silently ignored: settings that
// are meaningless on this platform are accepted with a warning in Policy::warnings.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "supervisor/core/policy/policy.h"
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/core/base/result.h"

namespace vigil {

// How a settings key is treated. Every key of srt 0.0.83's schema has one (the table
// test compares tests/data/srt_0.0.83_keys.txt with settings_key_table()).
enum class Support {
  kHandled,          // read into the Policy and acted on
  kUnsupported,      // refused: the message says why and what to do instead
  kUnsupportedIfOn,  // only true is refused (false is the default and harmless)
  kNotApplicable,    // no use for it in vigil: accepted, with a warning saying so
};

struct KeySpec {
  std::string_view key;
  Support support;
  std::string_view what;     // refusals: what the key asks for and why vigil says no;
                             // kNotApplicable: why it has no effect
  std::string_view instead;  // refusals: what to do instead
};

struct SettingsKey {
  std::string path;  // dotted: "network.parentProxy"
  KeySpec spec;
};

// Every key the loader knows, at every level it reads.
std::vector<SettingsKey> settings_key_table();

// The keys of one level ("" for the top, "network", "vigil.limits", ...); empty for a
// level vigil does not read.
std::span<const KeySpec> keys_at(std::string_view prefix);

// The message a refused key gets (after "<file>: <position>: <key>: ").
std::string refusal(const KeySpec& spec);

struct LoadContext {
  std::string cwd;   // absolute, what relative settings paths are resolved against
  std::string home;  // what ~ expands to
};

// Parses settings text. `source` names it in messages (normally the file path).
Result<Policy> parse_policy(std::string text, std::string_view source, const LoadContext& ctx);

// Reads and parses a settings file (a missing or unreadable file is an error, never a
// fallback to the default).
Result<Policy> load_policy_file(const std::string& path, const LoadContext& ctx);
// The same from an fd opened with open_regular_file() (supervisor/core/base/regular_file.h):
// what is parsed is what the caller checks. `source` names it in messages.
Result<Policy> load_policy_fd(int fd, const std::string& source, const LoadContext& ctx);
// Opens a settings file for load_policy_fd: a file that does not exist is input the user
// must fix (Errc::kInvalidPolicy, exit 2), never a fallback to the default policy.
Result<UniqueFd> open_settings_file(const std::string& path);

// The embedded default: cwd writable, everything else read-only, mandatory denies on,
// no network.
Policy default_policy(const LoadContext& ctx);

// Levenshtein-nearest candidate within a small distance, or "" when none is close.
std::string nearest_key(std::string_view key, const std::vector<std::string_view>& candidates);

}  // namespace vigil
