// `vigil replay --changes` and `--diff` (issue 17): the change set of a log
// (supervisor/replay/change_set.h) printed per path, and the content of each change as a
// unified diff (text) or sizes and hashes (binary), from the session's content store.
// The HTML report's Changes section uses the same diffs.
//
// Pure but for store_reader(): the views take the store as a function.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "supervisor/core/events/stored_content.h"
#include "supervisor/replay/change_set.h"
#include "supervisor/replay/replay_feed.h"

namespace vigil::replay {

// What the store holds for an image (core/events/stored_content.h).
using Content = StoredContent;
using ContentFn = StoredContentFn;

// Reads images from the store directory `dir`, or from each of a session's stores
// (`vigil run` has one, an agent session one per command: log/session_log.h
// capture_dirs_for()), the bytes checked against their hash, at most kMaxDiffBytes each.
// A missing directory reads as "not in the store".
ContentFn store_reader(std::string dir);
ContentFn store_reader(std::vector<std::string> dirs);
inline constexpr std::uint64_t kMaxDiffBytes = std::uint64_t{16} << 20;

// One pass over the feed.
Result<changes::ChangeSet> change_set_of(const Feed& feed);

// Whether `c` is one of `only` (log/change_model.h).
using changes::selected;

// "file 12 bytes, mode 0640, owner 0:0, sha256 ..." (raw: escape when shown).
std::string describe_state(const changes::State& s);

// The --changes view: one block per path, then the totals.
void print_changes(const changes::ChangeSet& cs, const std::vector<std::string>& only,
                   const Out& out);

struct ChangeDiff {
  std::vector<std::string> lines;  // raw: "--- PATH", "+++ PATH", hunks
  std::string summary;  // when there is no text diff: binary, not captured, a symlink, ...
  bool shortened = false;
};
ChangeDiff diff_of(const changes::PathChange& c, const ContentFn& read);

// The changes grouped for a reader at the scale of an agent session (issue 38.7): by
// root (the workspace first, then each other top directory: ~/.npm, /tmp/x), and within a
// root, the bulk stores a tool fills by the thousand (.git/objects, npm's _cacache,
// node_modules, __pycache__, a cargo registry) folded into one entry with its counts.
// Pure.
struct ChangeStore {
  std::string path;  // ".../.git/objects"
  std::vector<const changes::PathChange*> paths;
};
struct ChangeGroup {
  std::string root;
  bool workspace = false;
  std::vector<const changes::PathChange*> paths;  // listed one by one
  std::vector<ChangeStore> stores;                // folded
  std::size_t total = 0;
};
std::vector<ChangeGroup> group_changes(const changes::ChangeSet& cs, std::string_view workspace);

// The HTML report's Changes section, and its one-line summary (replay_html_changes.cc).
// `log`: the log's name, HTML-escaped; `workspace`: session.start's cwd.
std::string html_changes_section(const changes::ChangeSet& cs, const ContentFn& read,
                                 const std::string& log, std::string_view workspace = {});
std::string html_changes_summary(const changes::ChangeSet& cs);

// The --diff view: each selected change's diff, in path order.
void print_diffs(const changes::ChangeSet& cs, const std::vector<std::string>& only,
                 const ContentFn& read, const Out& out);

}  // namespace vigil::replay
