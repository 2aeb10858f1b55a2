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
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "supervisor/core/events/event_schema.h"

namespace vigil {

inline constexpr std::string_view kOcsfVersion = "1.2.0";

// The processes of a session as their proc.exec records made them known (issue 38.7):
// an event's actor.process carries the command line, executable and parent OCSF 1.2
// defines, not a bare pid. Keyed by command and pid (each command of a session has a
// PID namespace of its own, so pids repeat). Bounded: past kMaxProcesses the oldest
// execs stay and later ones are told by pid alone.
struct OcsfProcess {
  std::string cmd_line;
  std::string exe;   // /proc/PID/exe after the exec; "" in older logs
  std::string name;  // argv[0]'s base name
  std::int64_t ppid = 0;
};

class OcsfProcesses {
 public:
  static constexpr std::size_t kMaxProcesses = 100000;
  // Learns a proc.exec (a later exec of the same pid replaces it); other kinds: nothing.
  void note(const events::Event& e);
  const OcsfProcess* find(std::optional<std::uint64_t> cmd, std::int64_t pid) const;

 private:
  std::map<std::pair<std::uint64_t, std::int64_t>, OcsfProcess> procs_;
};

struct OcsfContext {
  std::uint64_t start_ms = 0;  // the session's start, ms since the epoch
  std::string session;
  std::string product_version;  // session.start's versions.vigil
  // What the session's execs so far said of its processes; null: pids alone. The
  // caller notes each record after its line (an exec's actor is its parent).
  const OcsfProcesses* processes = nullptr;
};

// The session's start from its id ("20261202T004306Z-4a351131bfe9": UTC), ms since the
// epoch; nullopt when the id does not begin with one.
std::optional<std::uint64_t> session_start_ms(std::string_view session_id);

// The OCSF line (no newline) for `e`, or nullopt for a kind that has no class here.
std::optional<std::string> ocsf_line(const events::Event& e, const OcsfContext& ctx);

}  // namespace vigil
