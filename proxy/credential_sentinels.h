// Masked credentials: the sentinel the sandbox sees in place of each secret, and the
// table that swaps a sentinel back for its real value, only in requests to the hosts
// that credential may reach (its injectHosts; none: network.allowedDomains).
//
// Sentinels have srt's form, `fake_value_<uuid4>`, padded with [a-z0-9_-] up to the real
// value's length when that is longer (so a body substitution keeps Content-Length).
// The table lives only in the supervisor's and the TLS helper's memory: never in a
// file, an argument, the session log, or the command's environment.
//
// Pure but for the random bytes (getrandom); thread-compatible.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "proxy/domain_pattern.h"
#include "supervisor/core/base/result.h"
#include "supervisor/core/policy/credentials_policy.h"

namespace vigil::proxy {

inline constexpr std::string_view kSentinelPrefix = "fake_value_";

// A fresh sentinel for `real` (its length only is read).
std::string mint_sentinel(std::string_view real);

struct SentinelEntry {
  std::string name;      // "GH_TOKEN", "env:DATABASE_URL#0"
  std::string sentinel;  // what the sandbox sees
  std::string real;      // what an inject host receives
  std::vector<std::string> inject_hosts;  // patterns, as allowedDomains
};

class SentinelTable {
 public:
  // Fails (Errc::kInvalidPolicy, naming the entry) on a pattern that does not parse.
  Result<void> add(SentinelEntry e);
  // Replaces, in `text`, every sentinel whose hosts cover `host`:`port`. Returns how many
  // replacements were made. A sentinel of a credential not meant for `host` is left as
  // it is: sending credential A's sentinel to B's host never yields A's secret.
  std::size_t substitute(std::string& text, std::string_view host, std::uint16_t port) const;
  // Whether any entry may be injected at `host`:`port`.
  bool injects_at(std::string_view host, std::uint16_t port) const;
  // Whether the entry named `name` may be injected at `host`:`port`.
  bool entry_injects_at(std::string_view name, std::string_view host, std::uint16_t port) const;
  // The entry whose sentinel is exactly `s`, or null.
  const SentinelEntry* by_sentinel(std::string_view s) const;
  const SentinelEntry* by_name(std::string_view name) const;
  bool empty() const { return entries_.empty(); }
  const std::vector<SentinelEntry>& entries() const { return entries_; }

 private:
  bool covers(std::size_t i, std::string_view host, std::uint16_t port) const;
  std::vector<SentinelEntry> entries_;
  std::vector<std::vector<DomainPattern>> patterns_;
};

// What the command's environment becomes under credentials.envVars.
struct MaskedEnvironment {
  std::vector<std::pair<std::string, std::string>> set;  // NAME -> sentinel (or masked text)
  std::vector<std::string> unset;                         // denied, or degraded to unset
  std::vector<std::string> warnings;                      // said on stderr, never a value
  SentinelTable table;
};

// Applies `creds` to `env` (NAME=VALUE entries, the environment the command would get):
// mode deny unsets; mode mask replaces the value (whole, the extract groups, or a JWT's
// claims) by sentinels and records the real values in the table. A masked variable that
// is not set stays unset. Errc::kInvalidPolicy for onExtractNoMatch "error".
Result<MaskedEnvironment> mask_environment(const CredentialsPolicy& creds,
                                           const std::vector<std::string>& allowed_domains,
                                           const std::vector<std::string>& env);

// A masked credential file's content as the command reads it (credentials.files, mode
// mask): the whole content one sentinel, or (extract / decode "jwt") the content with
// each secret span replaced, the real values added to `table`. No fake (nullopt) when
// nothing was masked: `warnings` then says why, and the caller hides the file
// (onExtractNoMatch "warn" and "deny" alike: a file's other bytes are no reason to show
// its secret). Errc::kInvalidPolicy for onExtractNoMatch "error".
struct MaskedFile {
  std::optional<std::string> fake;
  std::vector<std::string> warnings;  // never a value
};
Result<MaskedFile> mask_file_content(const CredentialFile& file,
                                     const std::vector<std::string>& allowed_domains,
                                     const std::string& content, SentinelTable* table);

// `env` with `masked` applied: unset names removed, set names replaced or added.
std::vector<std::string> apply_masked_environment(std::vector<std::string> env,
                                                  const MaskedEnvironment& masked);

}  // namespace vigil::proxy
