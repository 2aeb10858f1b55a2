// Follows every session log in one directory (the user's sessions/, or --dir): new logs as
// they appear, growing ones as they grow, each verified line by line as it is read
// (supervisor/export/record_chain.h). Logs are known by device and inode, so a log renamed
// (rotated) in or out of the directory goes on where it was; a log that disappears while
// open (pruned) is read to its end through the descriptor still held. A log that was
// removed before its end was read (the exporter was stopped meanwhile) gets a `lost` mark,
// a log whose chain or seal fails a `broken` mark: nothing is skipped without a word.
// One thread; the exporter's loop (supervisor/export/exporter.h) calls poll().
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/export/export_cursor.h"
#include "supervisor/export/export_item.h"
#include "supervisor/replay/ocsf_export.h"

namespace vigil {

struct FollowOptions {
  std::string dir;                 // the directory of session logs
  std::optional<std::string> key;  // the user's log key (seals); none: seals unchecked
  std::string host;                // this machine's name, in every item
  std::string format = "vigil";    // "vigil" or "ocsf": the payload of a record
};

class LogFollower {
 public:
  LogFollower(FollowOptions opts, ExportCursor cursor);

  // Takes the items of one line (a record and, where its chain breaks, the mark): true
  // when they went out, false to stop here (the spool is full): the line is read again
  // next time.
  using Emit = std::function<bool(std::vector<ExportItem>& items)>;

  // One pass over the directory and every log. Error: the directory cannot be read.
  // `more`: set when a log has more to read than one pass takes.
  Result<void> poll(const Emit& emit, bool* more = nullptr);

  // The cursor as of the last item that went out (save it after they are delivered).
  ExportCursor cursor() const;
  // Logs read to their end and complete (session.end), logs still followed.
  std::size_t open_logs() const { return open_.size(); }

 private:
  struct Open {
    UniqueFd fd;
    std::optional<OcsfContext> ctx;
  };
  using Id = std::pair<std::uint64_t, std::uint64_t>;
  bool read_log(FollowedLog& log, Open& o, const Emit& emit, bool* more);
  bool emit_line(FollowedLog& log, Open& o, std::string_view line, const Emit& emit);
  bool emit_mark(FollowedLog& log, ExportItem::Mark m, std::string why, const Emit& emit);
  Result<Open> open_log(const FollowedLog& log) const;

  FollowOptions opts_;
  std::map<Id, FollowedLog> logs_;
  std::map<Id, Open> open_;
};

}  // namespace vigil
