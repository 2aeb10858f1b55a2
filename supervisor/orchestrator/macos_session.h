// The pure parts of `vigil run` on macOS (the I/O shell is supervisor/session/
// seatbelt_backend.cc over supervisor/launch/macos_launch.cc, built only there). Built and tested on every OS.
//
// On macOS there is no vigil-init and no observer inside the sandbox: the kernel's own
// Seatbelt reports, read back through `log stream`, are the witness. Each report tagged
// with this session's tag becomes the same session-log event the Linux observer would
// have sent (an fs.write with verdict "denied"), so the annotation, `--violations-fd` and
// `vigil replay` work unchanged. Not thread-safe (one feed per stream).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seatbelt/log_parser.h"
#include "supervisor/core/fs/path_verdict.h"
#include "supervisor/core/events/event_schema.h"

namespace vigil {

// The tag every deny rule of this session carries: "vigil_" and the session id with
// anything outside [A-Za-z0-9] as '_' (session ids are "20250131T120501Z-3f9c2a1b7d4e").
// Always satisfies valid_log_tag(): shortened to 64 bytes, padded to 8.
std::string seatbelt_log_tag(std::string_view session_id);

// A log the session could rewrite proves nothing. What to protect is log_guard()'s
// (log_guard.h), as on Linux, which binds it read-only; here it becomes a denyWrite rule
// and the plan is rebuilt from the policy and `found`, so the profile denies it like any
// other. `log_file`: absolute, symlink-resolved. Returns whether a rule was added.
bool protect_log(Policy& policy, Plan& plan, const std::vector<ProtectedPath>& found,
                 const std::string& log_file);

// The Seatbelt operations that are writes, as the fs.write `syscall` field names them
// (events::is_known_write_syscall() accepts exactly these too).
bool is_seatbelt_write_operation(std::string_view op);

// `log stream` lines -> session-log events. Reports that are not writes (reads hidden by
// denyRead, direct network attempts, Mach lookups) have no Linux counterpart in the log:
// they are counted, by class, in counters() for session.end.
class SeatbeltEventFeed {
 public:
  // `plan` (not owned, must outlive the feed) supplies the model-facing reasons.
  SeatbeltEventFeed(std::string tag, const Plan* plan);

  // One line of `log stream` output, without its '\n'.
  std::vector<events::Body> feed(std::string_view line);
  // End of stream.
  std::vector<events::Body> finish();

  // "seatbelt.denied_read", "seatbelt.denied_network", "seatbelt.denied_other",
  // "seatbelt.duplicate_reports" (folded "N duplicate reports"), "seatbelt.other_session",
  // "seatbelt.malformed", "seatbelt.log_loss" (the log system dropped messages).
  const std::map<std::string, std::uint64_t>& counters() const { return counters_; }

 private:
  void take(std::vector<Result<SeatbeltLogEvent>> in, std::vector<events::Body>* out);

  SeatbeltLogReader reader_;
  const Plan* plan_;
  std::map<std::string, std::uint64_t> counters_;
};

}  // namespace vigil
