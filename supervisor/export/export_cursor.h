// Where `vigil export --follow` is in every log it follows, so that after a restart it
// goes on exactly where it stopped: per log, the file's identity (device, inode, and the
// hash of its first record, so a recycled inode is not taken for the old file), the byte
// offset after the last line exported, and the chain check's state at that point
// (supervisor/export/record_chain.h); and how much of the spool the collector has taken.
// Saved whole to a new file and renamed over the old one (after fsync), so a crash leaves
// the old cursor or the new one, never half of one. It is saved only after what it covers
// went out (into the spool, to stdout or the file), so a restart repeats at most the last
// batch (at-least-once: a receiver sees a repeat as a duplicate with the same chain hash).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "supervisor/core/base/result.h"
#include "supervisor/export/record_chain.h"

namespace vigil {

struct FollowedLog {
  std::string name;  // the file's name when last seen (informational: logs are known by inode)
  std::uint64_t dev = 0;
  std::uint64_t ino = 0;
  std::uint64_t offset = 0;  // bytes read and exported: always just after a newline
  ChainState chain;
  bool done = false;  // session.end exported: nothing more will come
  friend bool operator==(const FollowedLog&, const FollowedLog&) = default;
};

struct ExportCursor {
  std::vector<FollowedLog> logs;
  std::uint64_t spool_acked = 0;  // bytes of the spool file the collector took
  friend bool operator==(const ExportCursor&, const ExportCursor&) = default;
};

// Pure: the cursor as JSON, and back. The parse refuses anything it did not write (an
// unknown key, a wrong type, a hash that is not 64 hex digits): the error names the file
// and says to remove it to export everything again.
std::string cursor_json(const ExportCursor& c);
Result<ExportCursor> parse_cursor(std::string_view text, std::string_view source);

// The cursor file: kNotFound-free (a missing file is an empty cursor). Refused when it is
// not a regular file of ours (O_NOFOLLOW).
Result<ExportCursor> load_cursor(const std::string& path);
Result<void> save_cursor(const std::string& path, const ExportCursor& c);

}  // namespace vigil
