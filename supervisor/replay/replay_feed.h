// Where `vigil replay`'s views get their records: a Feed is one pass over a log, record by
// record, that can be run again (a view that shows totals at its top reads the log twice
// rather than keeping it). Over a file, a pass holds one line at a time, so every view's
// memory is bounded by what it aggregates (capped counts and groups), never by the size
// of the log; over a LoadedLog (tests, small logs built in memory) it walks the records.
//
// Views write through an Out as they go: the command sends each piece to stdout or the
// report file, the string forms (render_timeline & co., for tests) append to a string.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "supervisor/core/base/result.h"
#include "supervisor/log/session_log.h"

namespace vigil::replay {

// Lines of the pass that were not records (load_log_text's unreadable lines), and whether
// the file ended inside a line.
struct FeedStats {
  std::size_t lines = 0;  // complete lines
  std::size_t unreadable = 0;
  bool truncated_tail = false;
};

// Called with each record that parsed, in file order; false stops the pass early.
using RecordFn = std::function<bool(const LogRecord&)>;
using Feed = std::function<Result<FeedStats>(const RecordFn&)>;
using Out = std::function<void(std::string_view)>;

// `log` must outlive the feed.
Feed feed_of(const LoadedLog& log);
// Each pass starts at offset 0 of `fd` (a regular file: open_session_log) and reads it
// with a LineReader; the fd must outlive the feed. Error: a read error.
Feed feed_of_fd(int fd);
// session.start and the records of command `id` (the envelope's cmd) only.
Feed only_command(Feed feed, std::uint64_t id);

// Out that appends to `*s`.
inline Out append_to(std::string* s) {
  return [s](std::string_view piece) { s->append(piece); };
}

}  // namespace vigil::replay
