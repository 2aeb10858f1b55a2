// `vigil export --format ocsf`: session log records as OCSF 1.2.0 events, one JSON object
// per line, so a fleet ships sessions to the SIEM it already runs (its own collector --
// Vector, Fluent Bit, an OTLP pipeline -- moves the lines):
//   proc.exec     -> Process Activity (1007), Launch
//   fs.write      -> File System Activity (1001): Create / Update / Delete / Rename /
//                    Set Attributes / Set Security, by what the call does
//   net.decision  -> Network Activity (4001): Open (allowed) or Refuse (denied)
// Every event declares the security_control profile: action_id/disposition_id say whether
// vigil allowed or denied it, `unmapped` carries the record's session, seq, syscall and
// rule id. Other kinds have no OCSF class here and are not exported. The schema files
// these follow are vendored under tests/data/ocsf-1.2.0 (the export test validates every
// line against them). Pure; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "supervisor/core/events/event_schema.h"

namespace vigil {

inline constexpr std::string_view kOcsfVersion = "1.2.0";

struct OcsfContext {
  std::uint64_t start_ms = 0;  // the session's start, ms since the epoch
  std::string session;
  std::string product_version;  // session.start's versions.vigil
};

// The session's start from its id ("20261202T004306Z-4a351131bfe9": UTC), ms since the
// epoch; nullopt when the id does not begin with one.
std::optional<std::uint64_t> session_start_ms(std::string_view session_id);

// The OCSF line (no newline) for `e`, or nullopt for a kind that has no class here.
std::optional<std::string> ocsf_line(const events::Event& e, const OcsfContext& ctx);

}  // namespace vigil
