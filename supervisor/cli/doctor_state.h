// `vigil doctor`'s account of the state vigil keeps (issue 38.6): where it is, what each
// part is for, how big it has grown, and how to prune it. gather_state() walks the state
// directory (I/O, bounded, never following a link); the text and JSON are pure, tested
// from a table of facts.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace vigil {

struct StatePart {
  std::string name;  // "sessions", "captures", "quarantine", "log.key"
  bool exists = false;
  std::uint64_t items = 0;  // logs, per-session directories; 1 for a file
  std::uint64_t bytes = 0;  // apparent size of everything in it
  bool partial = false;     // the walk stopped at its bound: at least this much
};

struct StateFacts {
  std::string dir;  // <state>/vigil; "" when there is no place (error says why)
  std::string error;
  std::vector<StatePart> parts;  // sessions, captures, quarantine, log.key
};

// <state>/vigil of this environment (XDG_STATE_HOME, else HOME/.local/state), walked.
StateFacts gather_state(const char* xdg_state_home, const char* home);

// "3.4 MiB", "512 B". Pure.
std::string human_bytes(std::uint64_t n);

// The lines `vigil doctor` prints for it, each part with what it is and how to prune it.
std::string render_state(const StateFacts& s);
nlohmann::ordered_json state_json(const StateFacts& s);

}  // namespace vigil
