// vigil.log.keep: after a session, the default log directory keeps only the newest N
// session logs (issue 19, item 5). Only names vigil gives its logs are considered
// ("<UTC start>-<hex>.jsonl", which sort by start time); anything else there, and any log
// given with --log, is never touched.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vigil {

// Whether `name` is a file name vigil gives a session log ("20250131T120501Z-3f9c2a1b7d4e.jsonl").
// Pure.
bool is_session_log_name(std::string_view name);

// Of `names` (a directory's entries), the session logs to remove so that `keep` remain:
// the oldest by name, never `current` (the session that just ended). Pure.
std::vector<std::string> logs_to_prune(std::vector<std::string> names, std::uint64_t keep,
                                       std::string_view current);

// Removes those logs from `dir`. Returns how many went; failures are counted in `failed`.
std::size_t prune_logs(const std::string& dir, std::uint64_t keep, std::string_view current,
                       std::size_t* failed);

}  // namespace vigil
