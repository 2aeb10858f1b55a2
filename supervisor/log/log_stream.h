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
#include "supervisor/core/base/unique_fd.h"

namespace vigil {

struct VerifyReport {
  bool ok = false;                       // every record present, in order, unaltered
  std::size_t records = 0;               // complete lines examined
  std::optional<std::size_t> broken_at;  // first broken record (0-based line index)
  std::string why;                       // one line
  std::string head;                      // hash of the last record, when ok
  bool complete = false;                 // ends with session.end
  std::string key_id;  // the key session.start names; "" = an unkeyed log
  bool sealed = false;  // keyed, and session.end's seal checked under `key` and matched
};

// Pure: checks parse + canonical form, session id, seq order, the prev chain, time
// order, session.start first and nothing after session.end, and a final newline.
// A changed record is named as the changed one (not its successor): an edit inside
// record k breaks only the link k -> k+1; an edit of k's prev breaks k-1 -> k and
// k -> k+1. A deleted record shows as a gap in seq, a reordered one as seq out of order.
//
// Keyed logs (supervisor/log/log_key.h): a session.end without its seal, or whose seal does not
// match under `key`, breaks the log there (it was replaced, or its end forged). When the
// seal cannot be checked (no key given, or another key), the report is ok but not
// `sealed`, and `why` says so. An unkeyed log is ok but not sealed, `key_id` empty.
VerifyReport verify_log_text(std::string_view text, std::optional<std::string_view> key = {});
Result<VerifyReport> verify_log(const std::string& path,
                                std::optional<std::string_view> key = {});

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

// The chain check of verify_log_text() (above), over a stream; with `key`, the
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
