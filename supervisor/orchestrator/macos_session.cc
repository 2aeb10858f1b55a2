#include "supervisor/orchestrator/macos_session.h"

#include "seatbelt/profile_builder.h"
#include "supervisor/report/annotation.h"
#include "supervisor/command/log_guard.h"

namespace vigil {

std::string seatbelt_log_tag(std::string_view session_id) {
  std::string tag = "vigil_";
  for (const char c : session_id) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    tag += alnum ? c : '_';
  }
  if (tag.size() > 64) tag.resize(64);
  while (tag.size() < 8) tag += '_';
  return tag;
}

bool protect_log(Policy& policy, Plan& plan, const std::vector<ProtectedPath>& found,
                 const std::string& log_file) {
  const auto guard = log_guard(plan, policy.fs.allow_write, log_file);
  if (!guard) return false;
  policy.fs.deny_write.push_back(log_guard_rule(*guard));
  plan = build_plan(policy, found);
  return true;
}

bool is_seatbelt_write_operation(std::string_view op) {
  // The names themselves are listed once, with the Linux syscalls, in event_schema.cc.
  return (op.starts_with("file-write-") || op == "file-link") && events::is_known_write_syscall(op);
}

SeatbeltEventFeed::SeatbeltEventFeed(std::string tag, const Plan* plan)
    : reader_(std::move(tag)), plan_(plan) {}

std::vector<events::Body> SeatbeltEventFeed::feed(std::string_view line) {
  std::vector<events::Body> out;
  take(reader_.feed(line), &out);
  return out;
}

std::vector<events::Body> SeatbeltEventFeed::finish() {
  std::vector<events::Body> out;
  take(reader_.finish(), &out);
  return out;
}

void SeatbeltEventFeed::take(std::vector<Result<SeatbeltLogEvent>> in,
                             std::vector<events::Body>* out) {
  for (auto& r : in) {
    if (!r) {
      ++counters_["seatbelt.malformed"];
      continue;
    }
    switch (r->kind) {
      case SeatbeltLogEvent::Kind::kIgnored:
        continue;
      case SeatbeltLogEvent::Kind::kOtherSession:
        ++counters_["seatbelt.other_session"];
        continue;
      case SeatbeltLogEvent::Kind::kLoss:
        ++counters_["seatbelt.log_loss"];
        continue;
      case SeatbeltLogEvent::Kind::kViolation:
        break;
    }
    const SeatbeltViolation& v = r->violation;
    // One event per report line: "N duplicate reports" are counted, not repeated, so a
    // command that hammers one path cannot flood the log through the kernel.
    if (v.count > 1) counters_["seatbelt.duplicate_reports"] += v.count - 1;
    if (v.kind == SeatbeltViolation::Target::kPath && is_seatbelt_write_operation(v.operation) &&
        !v.target.empty() && v.target.front() == '/') {
      events::FsWrite w;
      w.pid = v.pid;
      w.syscall = v.operation;
      // Seatbelt reports the path it checked, already resolved (/private/tmp/...), which
      // is the plan's spelling too.
      w.path = v.target;
      w.resolved = v.target;
      w.verdict = Verdict::kDenied;
      w.reason = "denied by the Seatbelt profile";
      w.reason = fs_denial_reason(w, *plan_);
      out->push_back(std::move(w));
    } else if (v.operation.starts_with("file-read")) {
      ++counters_["seatbelt.denied_read"];
    } else if (v.operation.starts_with("network")) {
      ++counters_["seatbelt.denied_network"];
    } else {
      ++counters_["seatbelt.denied_other"];
    }
  }
}

}  // namespace vigil
