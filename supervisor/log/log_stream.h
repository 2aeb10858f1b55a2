// Reading a session log of any size in constant memory: lines are pulled one at a time
// from an fd (or a string, for tests), and the chain check looks at most one record
// ahead. `vigil replay --verify` and `--json` stream; so does the check that a file is a
// session log at all (its first line must be a vigil record), which gives a plain "not a
// session log" instead of a chain break for a file that never was one.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "supervisor/core/base/result.h"
#include "supervisor/log/session_log.h"

namespace vigil {

class LineReader {
 public:
  // `max_line`: a longer line is not buffered (it is skipped and reported as kTooLong):
  // no record vigil writes is longer than Limits::log().max_line.
  LineReader(int fd, std::size_t max_line);
  explicit LineReader(std::string_view text, std::size_t max_line);

  enum class Got { kLine, kTooLong, kTail, kEnd, kError };
  // kLine: `line` holds one complete line (no '\n'). kTail: the unterminated end of the
  // file. kEnd: nothing more. kError: a read error (errno-style message in error()).
  Got next(std::string* line);
  const std::string& error() const { return error_; }

 private:
  bool fill();
  int fd_ = -1;
  std::string_view text_;
  std::size_t max_line_;
  std::string buf_;
  std::size_t pos_ = 0;
  bool eof_ = false;
  std::string error_;
};

// The chain check of verify_log_text() (session_log.h), over a stream; with `key`, the
// seal of a keyed log is checked too (supervisor/log/log_key.h).
VerifyReport verify_log_lines(LineReader& in, std::optional<std::string_view> key = {});

// Opens `path` as a session log (a regular file: open_regular_file) and checks that its
// first line is a vigil record; else the error says the file is not a session log.
Result<UniqueFd> open_session_log(const std::string& path);

// Calls `take` with every complete line whose record kind matches `filter` (as
// replay::render_json), in file order, in constant memory. Lines that are not records
// are skipped. Error: the file cannot be read.
Result<void> for_each_record_line(int fd, std::string_view filter,
                                  const std::function<void(const std::string&)>& take);

}  // namespace vigil
