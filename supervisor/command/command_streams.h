// What flows out of one command's sandbox while it runs, on its way into the record: the
// observer's event lines (untrusted: parsed against the schema, judged against the plan,
// a forged or malformed one counted and dropped) and the command's output (logged chunk
// by chunk within vigil.log.maxOutputBytes: its first half as it comes, and its last
// half, kept in a ring and logged by finish(), after a log.truncated record that says
// what the gap between them held; the output itself is passed on whole). run_sandboxed()
// hands on_event_line and on_output to the launch (LaunchIo).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "supervisor/core/base/sha256.h"
#include "supervisor/core/events/event_schema.h"
#include "supervisor/launch/sandbox_launch.h"
#include "supervisor/launch/sandbox_plan.h"
#include "supervisor/backstop/change_capture.h"
#include "supervisor/command/command_backstop.h"

namespace vigil {

class CommandRecord;

class CommandStreams {
 public:
  using Forward = std::function<bool(OutputStream, std::string_view)>;
  // `record` and `ignore_command` are the caller's, read at every line: the record opens
  // (and a spare learns its command) after the streams are set up. `merge_output`: every
  // chunk is both streams' (LaunchIo::merge_output).
  CommandStreams(const PreparedSandbox& prepared, CommandRecord* const& record,
                 const std::string& ignore_command, const Forward& forward, bool merge_output);

  // One line from vigil-init's event pipe.
  void on_event_line(std::string_view line);
  // One chunk of the command's output: logged, then forwarded; false when its
  // destination is gone.
  bool on_output(OutputStream s, std::string_view bytes);

  // At the command's end: the tail's chunks go to the log, after the log.truncated
  // record when something was left out between head and tail. Call once, after the last
  // on_output() and before the block is rendered (the block says what was cut).
  void finish();

  // Appends to the record once it is open (before, nothing is logged: a spare's proxy
  // serves before its record exists, and nothing can reach it then).
  void append(events::Source src, events::Body body);

  WrittenPaths written;  // for the backstop
  ChangedPaths changed;  // for the post-images
  // The last byte the command wrote to stderr ended a line (nothing written counts).
  bool stderr_ends_line() const { return stderr_ends_line_; }

 private:
  const PreparedSandbox& prepared_;
  CommandRecord* const& record_;
  const std::string& ignore_command_;
  const Forward& forward_;
  const bool merge_output_;
  const std::size_t max_chunk_;
  void log_chunks(OutputStream s, std::string_view bytes);
  void keep_tail(OutputStream s, std::string_view bytes);

  const std::uint64_t log_cap_;
  const std::uint64_t head_cap_;  // the first half of the cap: logged as it comes
  std::uint64_t logged_output_ = 0;
  // The last (cap - head) bytes past the head, chunk by chunk in arrival order: the
  // order of the two streams holds across them as it does in the head.
  std::deque<std::pair<OutputStream, std::string>> tail_;
  // Bytes at the start of tail_.front() that were pushed out: skipped, not erased (an
  // erase moves the rest of the chunk at every read, which cost more than the copy itself).
  std::size_t front_skip_ = 0;
  std::uint64_t tail_bytes_ = 0;  // kept, front_skip_ not counted
  // Chunks pushed out of the tail, their memory kept for the next ones (no allocation and
  // no fresh pages for every read of a long output).
  std::vector<std::string> spare_chunks_;
  std::uint64_t omitted_ = 0;  // past the head and pushed out of the tail
  std::uint64_t stream_bytes_[2] = {0, 0};  // stdout, stderr: all of it
  Sha256 stream_sha_[2];
  bool stderr_ends_line_ = true;
};

}  // namespace vigil
