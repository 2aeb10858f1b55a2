#include "supervisor/command/command_streams.h"

#include <algorithm>
#include <variant>

#include "supervisor/core/policy/ignore_violations.h"
#include "supervisor/launch/deny_at_call.h"
#include "supervisor/report/annotation.h"
#include "supervisor/report/policy_judge.h"
#include "supervisor/command/command_types.h"

namespace vigil {

CommandStreams::CommandStreams(const PreparedSandbox& prepared, CommandRecord* const& record,
                               const std::string& ignore_command, const Forward& forward,
                               bool merge_output)
    : prepared_(prepared),
      record_(record),
      ignore_command_(ignore_command),
      forward_(forward),
      merge_output_(merge_output),
      max_chunk_(events::Limits::log().max_data),
      // vigil.log.maxOutputBytes bounds the log, never the output: past it the command's
      // output still reaches its destination whole, only its copy in the log stops (once,
      // said by a log.truncated record; the bytes left out are counted).
      log_cap_(prepared.policy.vigil.log_max_output_bytes) {}

void CommandStreams::append(events::Source src, events::Body body) {
  if (record_ != nullptr) record_->append(src, std::move(body));
}

// Lines from the sandbox are untrusted: parsed against the schema, bounded, and a
// malformed or forged one is counted and dropped, never logged as if it were true.
void CommandStreams::on_event_line(std::string_view line) {
  auto body = events::parse_untrusted_event_line(line);
  if (!body) {
    switch (events::fault_of(body.error())) {
      case events::LineFault::kMalformed:
        record_->count("lines.malformed");
        break;
      case events::LineFault::kForged:
        record_->count("lines.forged");
        break;
      case events::LineFault::kUnsupported:
        record_->count("lines.unsupported");
        break;
    }
    return;
  }
  if (auto* w = std::get_if<events::FsWrite>(&*body)) {
    written.note(*w);
    w->reason = fs_denial_reason(*w, prepared_.plan, &prepared_.policy);
    w->unguarded = unguarded_protected_name(*w, prepared_.policy.fs);
    w->rule_id = record_rule_id(prepared_.policy, prepared_.plan, *w);
    if (w->verdict == Verdict::kDenied) {
      w->ignored = ignored_by(prepared_.policy.ignore_violations, ignore_command_,
                              w->resolved.empty() ? w->path : w->resolved);
    }
  }
  if (auto* r = std::get_if<events::FsRead>(&*body)) {
    if (!confirm_hidden_read(r, prepared_.plan)) {
      record_->count("reads.unconfirmed");  // not a path this plan hides
      return;
    }
  }
  changed.note(*body);
  append(events::Source::kObserver, std::move(body).value());
}

// The command's output: logged chunk by chunk (the exact bytes, for replay), then
// passed on. Nothing in it is ever parsed: a command printing event JSON only prints.
bool CommandStreams::on_output(OutputStream s, std::string_view bytes) {
  const std::uint64_t room = log_cap_ - logged_output_;
  const std::string_view kept =
      bytes.substr(0, static_cast<std::size_t>(std::min<std::uint64_t>(room, bytes.size())));
  logged_output_ += kept.size();
  // A record holds at most the log's chunk size: split bigger reads.
  for (std::string_view rest = kept; !rest.empty();) {
    const std::string_view chunk = rest.substr(0, max_chunk_);
    rest.remove_prefix(chunk.size());
    if (s == OutputStream::kStdout)
      append(events::Source::kSupervisor, events::IoStdout{std::string(chunk)});
    else
      append(events::Source::kSupervisor, events::IoStderr{std::string(chunk)});
  }
  if (kept.size() < bytes.size()) {
    if (!output_cut_) append(events::Source::kSupervisor, events::LogTruncated{log_cap_});
    output_cut_ = true;
    record_->count("io.unlogged_bytes", bytes.size() - kept.size());
  }
  if (s == OutputStream::kStderr || merge_output_) stderr_ends_line_ = bytes.back() == '\n';
  const bool open = forward_(s, bytes);
  if (!open) record_->count(s == OutputStream::kStdout ? "io.stdout_closed" : "io.stderr_closed");
  return open;
}

}  // namespace vigil
