// What vigil keeps on disk for the user, and how big it is (issue 31, item 8): the
// session logs (<state>/vigil/sessions), the change capture stores
// (<state>/vigil/captures/<id>) and the quarantines (<state>/vigil/quarantine/<id>).
// The capture store's caps (vigil.capture.maxSessionBytes, maxTotalBytes) are checked
// against capture_store_usage(); `vigil logs prune` and vigil.log.keep remove a log's store
// with it (remove_capture_store()); `vigil doctor` shows vigil_state_sizes().
//
// Every walk is openat-based, never follows a symlink, and is bounded (kMaxEntries).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "supervisor/core/base/result.h"

namespace vigil {

struct TreeSize {
  std::uint64_t bytes = 0;    // regular files' sizes
  std::uint64_t entries = 0;  // top-level entries (sessions, logs)
  bool cut = false;           // the walk stopped at kMaxStateEntries or kMaxStateDepth: bytes is a floor
};

struct StateSizes {
  std::string dir;  // <state>/vigil
  TreeSize logs, captures, quarantine;
  std::uint64_t total() const { return logs.bytes + captures.bytes + quarantine.bytes; }
};

inline constexpr std::uint64_t kMaxStateEntries = 1'000'000;
// Deeper than any store vigil lays out (a walk that stops here says it was cut short).
inline constexpr int kMaxStateDepth = 32;

// The sizes of the default state directory ($XDG_STATE_HOME/vigil or ~/.local/state/vigil);
// a part that does not exist is zero.
Result<StateSizes> vigil_state_sizes(const char* xdg_state_home, const char* home);

// How much the capture stores hold: the store of session `id` and all of them (under
// `root`, <state>/vigil/captures).
struct CaptureUsage {
  std::uint64_t session = 0;
  std::uint64_t all = 0;
};
// A store unchanged since an earlier call in this process is not walked again (its size is
// kept while its directory's mtime stays what it was, and was settled then:
// store_memo_fresh()).
CaptureUsage capture_store_usage(const std::string& root, std::string_view id);
// Pure: whether a size walked at `walked_at_ns` may stand for a directory whose mtime is
// `mtime_ns` (both CLOCK_REALTIME): the mtime was at least 2 s old at the walk.
bool store_memo_fresh(std::int64_t mtime_ns, std::int64_t walked_at_ns);

// Removes the capture store of session `id` under `root` (its files, then the directory;
// never following a symlink). A missing store is no error.
Result<void> remove_capture_store(const std::string& root, std::string_view id);

// The size of what is under `dir` (absolute), per TreeSize.
TreeSize tree_size(const std::string& dir);

}  // namespace vigil
