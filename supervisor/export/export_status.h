// What a running `vigil export --follow` says about itself, for `vigil doctor`: a small
// JSON file in the exporter's state directory, rewritten (whole, renamed over) when the
// spool fills or drains and every few seconds. Pure parts are the two conversions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "supervisor/core/base/result.h"

namespace vigil {

struct ExportStatus {
  std::int64_t pid = 0;
  std::int64_t updated = 0;        // seconds since the epoch
  std::string target;              // "syslog+tls://host:port", "stdout", ...
  bool connected = false;
  std::uint64_t spool_bytes = 0;   // not yet taken by the collector
  std::uint64_t spool_cap = 0;
  bool spool_full = false;
  std::int64_t full_since = 0;     // seconds since the epoch, when spool_full
  std::uint64_t broken_sessions = 0;
  std::uint64_t lost_marks = 0;
  friend bool operator==(const ExportStatus&, const ExportStatus&) = default;
};

std::string status_json(const ExportStatus& s);
Result<ExportStatus> parse_status(std::string_view text);

// <state dir>/vigil/export: where the cursor, the spool and the status live by default.
Result<std::string> default_export_dir(const char* xdg_state_home, const char* home);

Result<void> save_status(const std::string& path, const ExportStatus& s);
// nullopt when there is no status file (no exporter ever ran here).
Result<std::optional<ExportStatus>> load_status(const std::string& path);

// The line `vigil doctor` prints about a spool at its cap, or "" when it is not. Pure.
std::string spool_full_warning(const ExportStatus& s, std::int64_t now);

}  // namespace vigil
