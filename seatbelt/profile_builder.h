// Policy plan -> macOS Seatbelt profile (SBPL), the macOS twin of bwrap/argv_builder.h.
// Pure: no I/O, nothing read from the machine it runs on, so it is tested on Linux.
//
// The one rule this file lives by: no user-controlled text ever becomes profile text (the
// writer takes only Sbpl, seatbelt/sbpl_text.h, so the compiler holds it to that). The
// fixed allowances every session gets are static text, seatbelt/base_profile.sb.
// Every path (and every user-named Mach service or socket) enters as a named parameter,
// `(subpath (param "WRITE_ROOT_0"))`, and reaches sandbox-exec as its own argv element
// `-D WRITE_ROOT_0=<value>`, so a path with `")`, a newline or a `;` stays a value: the
// profile text is made of fixed tokens, parameter names, and two values we generate and
// validate ourselves (the session's log tag, [A-Za-z0-9_]; the proxy ports, integers).
//
// Semantics (the same plan the Linux mount table is built from, so both agree):
//   * the plan's ops are emitted in mount order (shallow before deep, same-path ties
//     broken like the resolver), each as an allow/deny for its subtree; Seatbelt's
//     last-matching-rule-wins then picks the deepest op, exactly as decide() does;
//   * the mandatory denies are also emitted as fixed regexes that match the name at any
//     depth anywhere (there is no scan on macOS, and a name-based rule survives the
//     command renaming a parent directory across writable roots);
//   * rename is a write to the source's parent, not to the denied path, so every denied
//     or hidden path, and each of its ancestors that the command could write, gets
//     `(deny file-write-unlink ...)` -- the Seatbelt stand-in for bwrap's mount points;
//   * every path is emitted in its spellings: the resolved one from the plan, the
//     literal one from the settings file, and the /private twin of /tmp, /var and /etc.
//
// Where the platforms cannot agree (macOS has no tmpfs), the profile is stricter: a
// write inside a denyRead directory is "ephemeral" on Linux and denied here; both leave
// the host untouched. Thread-safe (no shared state).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "seatbelt/sbpl_text.h"
#include "supervisor/core/policy/mandatory_denies.h"
#include "supervisor/core/policy/policy.h"
#include "supervisor/core/fs/path_verdict.h"
#include "supervisor/core/base/result.h"

namespace vigil {

// Per-session values, chosen by the supervisor.
struct SeatbeltSession {
  // Carried by every deny rule as its message, so `log stream` can be filtered down to
  // this session's violations. [A-Za-z0-9_], 8..64 characters (checked).
  std::string log_tag;
  // Loopback ports of the session's proxy (HTTP and SOCKS, or one mux port). Empty: no
  // network at all.
  std::vector<std::uint16_t> proxy_ports;
};

struct SeatbeltInputs {
  const Policy* policy = nullptr;  // network and macOS options, literal path spellings
  const Plan* plan = nullptr;      // build_plan(policy, protected paths found by a scan)
  SeatbeltSession session;
};

struct SeatbeltParam {
  std::string name;    // [A-Z0-9_]: what the profile says in (param "...")
  std::string value;   // passed verbatim as argv: never parsed as profile text
  std::string origin;  // the rule it came from, for `vigil explain`
};

struct SeatbeltProfile {
  std::string text;                   // SBPL: fixed tokens and parameter names only
  std::vector<SeatbeltParam> params;  // in first-use order
  std::vector<std::string> warnings;  // opt-ins that open a hole, said out loud
};

Result<SeatbeltProfile> build_seatbelt_profile(const SeatbeltInputs& in);

// The argv for /usr/bin/sandbox-exec: seatbelt/sandbox_exec_argv.h.

// ---- the pieces, exposed for table tests ----

// Backslash-escapes every POSIX ERE (and ECMAScript) metacharacter: . [ ( ) { * + ? ^ $
// | and \ itself (']' and '}' are ordinary on their own and stay bare). With fold_case, each ASCII
// letter becomes a two-letter class
// ("git" -> "[gG][iI][tT]"), because APFS is case-insensitive by default and `.GIT/hooks`
// is the same directory as `.git/hooks`. Refuses control characters and non-ASCII bytes
// (their regex meaning depends on the engine's locale).
Result<std::string> regex_escape(std::string_view literal, bool fold_case);

// sbpl_string (a fixed token as an SBPL string literal): seatbelt/sbpl_text.h.

// A path parameter's value: absolute, valid UTF-8 (APFS names are), no NUL, at most
// 1024 bytes (macOS PATH_MAX; a longer path cannot be opened there anyway). Quotes,
// parentheses, backslashes and newlines are fine: they are never parsed.
Result<void> check_path_value(std::string_view value);

// The fixed regex that matches a mandatory-deny name at any depth, and everything under
// it: "^.*/\.[gG][iI][tT]/[hH][oO][oO][kK][sS](/.*)?$".
std::string mandatory_deny_regex(const MandatoryDeny& deny);

// The directories that hold a multi-component mandatory deny (".git" for ".git/hooks",
// ".claude"), matched exactly at any depth: "^.*/\.[gG][iI][tT]$". They are write-denied
// themselves (not their contents), so a directory prepared elsewhere cannot be renamed
// into place with hooks inside, nor the real one renamed away. Stricter than Linux,
// which leaves a missing .git alone so that `git init` works (on macOS the any-depth
// .git/hooks deny stops `git init` anyway).
std::vector<std::string> mandatory_head_regexes();

// The spellings of one resolved path under which Seatbelt may see it: itself and its
// /private twin (/tmp <-> /private/tmp, /var <-> /private/var, /etc <-> /private/etc).
std::vector<std::string> private_twins(std::string_view path);

bool valid_log_tag(std::string_view tag);

}  // namespace vigil
