#include "supervisor/replay/replay_feed.h"

#include <unistd.h>

#include <utility>

#include "supervisor/log/log_stream.h"

namespace vigil::replay {

Feed feed_of(const LoadedLog& log) {
  return [&log](const RecordFn& take) -> Result<FeedStats> {
    FeedStats st;
    st.lines = log.lines;
    st.unreadable = log.unreadable.size();
    st.truncated_tail = log.truncated_tail;
    for (const auto& r : log.records) {
      if (!take(r)) break;
    }
    return st;
  };
}

Feed feed_of_fd(int fd) {
  return [fd](const RecordFn& take) -> Result<FeedStats> {
    if (::lseek(fd, 0, SEEK_SET) != 0) return system_error("cannot rewind the session log");
    LineReader in(fd, events::Limits::log().max_line);
    FeedStats st;
    LogRecord rec;  // one line at a time: its buffers are reused
    while (true) {
      const auto got = in.next(&rec.line);
      if (got == LineReader::Got::kError)
        return make_error(Errc::kSystem, "cannot read the session log: " + in.error());
      if (got == LineReader::Got::kEnd) break;
      if (got == LineReader::Got::kTail) {
        st.truncated_tail = true;
        break;
      }
      const std::size_t index = st.lines++;
      if (got == LineReader::Got::kTooLong) {
        ++st.unreadable;
        continue;
      }
      auto e = events::parse_log_record(rec.line);
      if (!e) {
        ++st.unreadable;
        continue;
      }
      rec.index = index;
      rec.event = std::move(*e);
      if (!take(rec)) break;
    }
    return st;
  };
}

Feed only_command(Feed feed, std::uint64_t id) {
  return [feed = std::move(feed), id](const RecordFn& take) {
    return feed([&](const LogRecord& r) {
      if (r.event.kind() != events::Kind::kSessionStart && r.event.cmd != id) return true;
      return take(r);
    });
  };
}

}  // namespace vigil::replay
