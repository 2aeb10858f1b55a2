// The per-user key that seals session logs: 32 random bytes in
// $XDG_STATE_HOME/vigil/log.key (or ~/.local/state/vigil/log.key), mode 0600, created on
// first use.
//
// Why: the hash chain alone proves only that a log is one unbroken sequence. A command
// that can write where the log lives can replace it by a chain of its own (the real
// session.start and a forged session.end with the right prev), or drop its last records.
// A keyed log names its key in session.start (key_id) and ends in a session.end whose
// `mac` is an HMAC-SHA256, under that key, of the session.end line written without it;
// through `prev` that line covers every record before it. Without the key nobody can
// write that seal, and every session hides the key (denyRead) and pins the directories
// down to its log, so a sandboxed command cannot read it or move the log's place.
#pragma once

#include <string>
#include <string_view>

#include "supervisor/core/base/result.h"

namespace vigil {

inline constexpr std::size_t kLogKeyBytes = 32;

// Where the key lives; the same environment rules as default_log_path(). Pure.
Result<std::string> log_key_path(const char* xdg_state_home, const char* home);
// $XDG_STATE_HOME / $HOME of this process.
Result<std::string> log_key_path();

// Reads the key, creating it (O_EXCL, 0600, directories 0700) when missing. Refused when
// it is not a regular file of ours, of exactly kLogKeyBytes, closed to others.
Result<std::string> load_or_create_log_key(const std::string& path);
// Reads it only (for `vigil replay --verify`); kNotFound when there is none.
Result<std::string> load_log_key(const std::string& path);

// What session.start records: 16 hex digits of sha256 over the key (names it, reveals
// nothing of it).
std::string log_key_id(std::string_view key);
// The seal: lower-case hex HMAC-SHA256 of `line` under `key`.
std::string log_seal(std::string_view key, std::string_view line);

// $XDG_STATE_HOME/vigil (or ~/.local/state/vigil), by the same rules: where the logs and
// their key live. Pure.
Result<std::string> vigil_state_dir(const char* xdg_state_home, const char* home);

}  // namespace vigil
