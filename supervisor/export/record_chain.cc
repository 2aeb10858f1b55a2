#include "supervisor/export/record_chain.h"

#include <string>
#include <utility>
#include <variant>

#include "supervisor/core/base/sha256.h"
#include "supervisor/log/log_key.h"

namespace vigil {
namespace {

// The first problem of `e` as the successor of `s`, or "".
std::string link_problem(const ChainState& s, const events::Event& e) {
  const std::string r = "record " + std::to_string(s.next_seq);
  if (s.ended) return r + " comes after session.end: records were appended to a finished log";
  if (s.next_seq == 0) {
    if (e.kind() != events::Kind::kSessionStart) return "record 0 is not session.start";
    if (e.seq != 0) return "record 0 has seq " + std::to_string(e.seq) + ": earlier records are missing";
    if (e.prev != events::kGenesisPrev) return "record 0's prev is not the genesis value";
    return "";
  }
  if (e.session != s.session) return r + " belongs to another session (" + e.session + ")";
  if (e.kind() == events::Kind::kSessionStart) return r + " is a second session.start";
  if (e.seq > s.next_seq) {
    return "the record with seq " + std::to_string(s.next_seq) + " is missing: " + r +
           " has seq " + std::to_string(e.seq);
  }
  if (e.seq < s.next_seq) {
    return r + " has seq " + std::to_string(e.seq) + ", which came before: duplicated or reordered";
  }
  if (e.prev != s.prev_hash) {
    return r + "'s prev does not match record " + std::to_string(s.next_seq - 1) +
           ": one of the two was edited after it was written";
  }
  if (e.t < s.prev_t) return r + "'s time goes backwards: records were reordered or edited";
  return "";
}

// session.end's seal under `key` (the rules of verify_log_lines): "" when it holds or
// cannot be checked here; else why it fails.
std::string seal_problem(ChainState& s, const events::Event& e,
                         std::optional<std::string_view> key) {
  const auto& end = std::get<events::SessionEnd>(e.body);
  const std::string r = "record " + std::to_string(e.seq) + " (session.end)";
  if (s.key_id.empty()) {
    return end.mac.empty() ? "" : r + " is sealed, but session.start names no key: it was edited";
  }
  if (end.mac.empty()) {
    return r + " has no seal, but session.start names key " + s.key_id +
           ": the end was forged or the log replaced";
  }
  if (!key || log_key_id(*key) != s.key_id) return "";  // not checkable here: not sealed
  events::Event unsealed = e;
  std::get<events::SessionEnd>(unsealed.body).mac.clear();
  if (log_seal(*key, events::serialize(unsealed)) != end.mac) {
    return r + " does not match its seal: the log was replaced, or records were removed or "
               "edited and the chain recomputed";
  }
  s.sealed = true;
  return "";
}

}  // namespace

ChainStep chain_step(ChainState& s, std::string_view line, std::optional<std::string_view> key) {
  ChainStep step;
  step.hash = sha256_hex(line);
  auto parsed = events::parse_log_record(line);
  if (parsed) step.event = std::move(*parsed);
  const bool was_broken = !s.broken.empty();
  if (!was_broken) {
    std::string why;
    if (!step.event) {
      why = "record " + std::to_string(s.next_seq) + " is not a valid record (" +
            parsed.error().message + "): it was edited";
    } else {
      why = link_problem(s, *step.event);
      if (why.empty() && step.event->kind() == events::Kind::kSessionEnd) {
        why = seal_problem(s, *step.event, key);
      }
    }
    if (!why.empty()) {
      s.broken = why;
      step.broke = std::move(why);
    }
  }
  step.verified = s.broken.empty();
  if (step.event && s.next_seq == 0 && s.session.empty() &&
      step.event->kind() == events::Kind::kSessionStart) {
    s.session = step.event->session;
    s.key_id = std::get<events::SessionStart>(step.event->body).key_id;
    s.first_hash = step.hash;
  }
  if (step.event && step.event->kind() == events::Kind::kSessionEnd) s.ended = true;
  if (step.event) s.prev_t = step.event->t;
  s.prev_hash = step.hash;
  ++s.next_seq;
  return step;
}

}  // namespace vigil
