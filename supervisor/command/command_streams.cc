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
      // output still reaches its destination whole, only its copy in the log keeps the
      // head and the tail (said by a log.truncated record; the bytes left out are counted).
      log_cap_(prepared.policy.vigil.log_max_output_bytes),
      head_cap_(log_cap_ / 2) {}

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
    if (is_cross_mount_link(*w)) {
      // Refused by the kernel as any link across mounts is; the tool copies instead.
      w->verdict = Verdict::kAllowed;
      w->reason = "the call failed with EXDEV: a hard link from outside the writable roots "
                  "(tools copy instead): its own result, not the sandbox's refusal";
    }
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

// The command's output: logged chunk by chunk (the exact bytes, for replay) while the
// head lasts, then kept in the tail's ring; passed on whole either way. Nothing in it is
// ever parsed: a command printing event JSON only prints.
bool CommandStreams::on_output(OutputStream s, std::string_view bytes) {
  const int i = s == OutputStream::kStdout ? 0 : 1;
  stream_bytes_[i] += bytes.size();
  stream_sha_[i].update(bytes);
  const std::uint64_t room = head_cap_ - logged_output_;
  const std::string_view head =
      bytes.substr(0, static_cast<std::size_t>(std::min<std::uint64_t>(room, bytes.size())));
  logged_output_ += head.size();
  log_chunks(s, head);
  if (head.size() < bytes.size()) keep_tail(s, bytes.substr(head.size()));
  if (s == OutputStream::kStderr || merge_output_) stderr_ends_line_ = bytes.back() == '\n';
  const bool open = forward_(s, bytes);
  if (!open) record_->count(s == OutputStream::kStdout ? "io.stdout_closed" : "io.stderr_closed");
  return open;
}

void CommandStreams::log_chunks(OutputStream s, std::string_view bytes) {
  // A record holds at most the log's chunk size: split bigger reads.
  for (std::string_view rest = bytes; !rest.empty();) {
    const std::string_view chunk = rest.substr(0, max_chunk_);
    rest.remove_prefix(chunk.size());
    if (s == OutputStream::kStdout)
      append(events::Source::kSupervisor, events::IoStdout{std::string(chunk)});
    else
      append(events::Source::kSupervisor, events::IoStderr{std::string(chunk)});
  }
}

void CommandStreams::keep_tail(OutputStream s, std::string_view bytes) {
  const std::uint64_t tail_cap = log_cap_ - head_cap_;
  if (bytes.size() > tail_cap) {  // only its end can stay
    omitted_ += bytes.size() - tail_cap;
    bytes.remove_prefix(static_cast<std::size_t>(bytes.size() - tail_cap));
  }
  if (bytes.empty()) return;
  if (!tail_.empty() && tail_.back().first == s && tail_.back().second.size() < max_chunk_) {
    tail_.back().second.append(bytes);  // small writes: fewer, fuller records
  } else if (!spare_chunks_.empty()) {
    std::string chunk = std::move(spare_chunks_.back());
    spare_chunks_.pop_back();
    chunk.assign(bytes);
    tail_.emplace_back(s, std::move(chunk));
  } else {
    tail_.emplace_back(s, std::string(bytes));
  }
  tail_bytes_ += bytes.size();
  while (tail_bytes_ > tail_cap) {
    const std::string& front = tail_.front().second;
    const std::uint64_t left = front.size() - front_skip_;
    const std::uint64_t over = tail_bytes_ - tail_cap;
    if (over >= left) {
      omitted_ += left;
      tail_bytes_ -= left;
      if (spare_chunks_.size() < 4) spare_chunks_.push_back(std::move(tail_.front().second));
      tail_.pop_front();
      front_skip_ = 0;
    } else {
      omitted_ += over;
      tail_bytes_ -= over;
      front_skip_ += static_cast<std::size_t>(over);
    }
  }
}

void CommandStreams::finish() {
  if (omitted_ > 0) {
    events::LogTruncated t;
    t.max_output_bytes = log_cap_;
    t.omitted_bytes = omitted_;
    t.stdout_bytes = stream_bytes_[0];
    t.stderr_bytes = stream_bytes_[1];
    t.stdout_sha256 = to_hex(stream_sha_[0].finish());
    t.stderr_sha256 = to_hex(stream_sha_[1].finish());
    append(events::Source::kSupervisor, std::move(t));
    if (record_ != nullptr) record_->count("io.unlogged_bytes", omitted_);
  }
  for (auto& [s, bytes] : tail_) {
    log_chunks(s, std::string_view(bytes).substr(front_skip_));
    front_skip_ = 0;
  }
  tail_.clear();
  spare_chunks_.clear();
  tail_bytes_ = 0;
  omitted_ = 0;
}

}  // namespace vigil
