// What flows out of one command's sandbox while it runs, on its way into the record: the
// observer's event lines (untrusted: parsed against the schema, judged against the plan,
// a forged or malformed one counted and dropped) and the command's output (logged chunk
// by chunk within vigil.log.maxOutputBytes, then passed on whole). run_sandboxed() hands
// on_event_line and on_output to the launch (LaunchIo).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

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
  const std::uint64_t log_cap_;
  std::uint64_t logged_output_ = 0;
  bool output_cut_ = false;
  bool stderr_ends_line_ = true;
};

}  // namespace vigil
