// `vigil replay --policy NEW.json LOG`: every recorded write and network decision judged
// again under another settings file (supervisor/report/policy_judge.h: the decision code
// `vigil run` uses), and each verdict that would change printed with the rule that
// decided it on each side. One pass over the log; nothing is kept per record.
#include <cstdio>
#include <string>

#include "supervisor/core/policy/rule_id.h"
#include "supervisor/report/policy_judge.h"
#include "supervisor/replay/replay_command.h"
#include "supervisor/replay/replay_rows.h"

namespace vigil::replay {
namespace {

using events::escape_for_terminal;

const char* fs_word(Verdict v) { return to_string(v); }
const char* net_word(events::NetVerdict v) { return events::to_string(v); }

struct Tally {
  std::uint64_t writes = 0, connections = 0, kept = 0;
  std::uint64_t to_allowed = 0, to_denied = 0, other = 0;
  void count(std::string_view from, std::string_view to) {
    if (to == "allowed") {
      ++to_allowed;
    } else if (to == "denied") {
      ++to_denied;
    } else {
      ++other;
    }
    (void)from;
  }
};

std::string change_line(std::string_view from, std::string_view to, std::uint64_t seq,
                        const std::string& what, const std::string& was,
                        const std::string& now) {
  return pad(std::string(from) + " -> " + std::string(to), 22) + pad("#" + std::to_string(seq), 8) +
         escape_for_terminal(what) + "\n" + std::string(30, ' ') +
         "was: " + escape_for_terminal(was) + "\n" + std::string(30, ' ') +
         "now: " + escape_for_terminal(now) + "\n";
}

}  // namespace

Result<void> stream_policy_diff(const Feed& feed, const PolicyUnderTest& next, const Out& out) {
  out("POLICY REPLAY under " + escape_for_terminal(next.name) + "\n");
  out(pad("CHANGE", 22) + pad("SEQ", 8) + "WHAT / RULE (was: recorded, now: under the new policy)\n");
  Tally t;
  RowMaker rows;  // names each write's process
  VIGIL_TRY_VOID(feed([&](const LogRecord& r) {
    const events::Event& e = r.event;
    if (const auto* s = std::get_if<events::SessionStart>(&e.body)) {
      out("session " + escape_for_terminal(e.session) + ", recorded policy digest " +
          (s->policy_digest.empty() ? std::string("(none)") : s->policy_digest) + "\n");
      return true;
    }
    if (const auto* w = std::get_if<events::FsWrite>(&e.body)) {
      ++t.writes;
      const Row row = rows.row(e);
      const FsJudged j = judge_write(*next.policy, *next.plan, *w, next.session_base);
      if (!j.verdict) {
        ++t.kept;
        return true;
      }
      if (*j.verdict == w->verdict) return true;
      t.count(fs_word(w->verdict), fs_word(*j.verdict));
      out(change_line(fs_word(w->verdict), fs_word(*j.verdict), e.seq,
                      write_word(*w) + " " + fs_target(*w) + "  (pid " + row.pid + " " +
                          row.command + ")",
                      shown_rule_id(*w), j.rule_id));
      return true;
    }
    if (const auto* d = std::get_if<events::NetDecision>(&e.body)) {
      ++t.connections;
      const NetJudged j = judge_net(next.policy->net, *next.matcher, *d);
      if (!j.verdict) {
        ++t.kept;
        return true;
      }
      if (*j.verdict == d->verdict) return true;
      t.count(net_word(d->verdict), net_word(*j.verdict));
      out(change_line(net_word(d->verdict), net_word(*j.verdict), e.seq,
                      std::string(events::to_string(d->proto)) + " " + net_target(d->host, d->port),
                      shown_rule_id(*d), j.rule_id));
      return true;
    }
    rows.row(e);  // a proc.exec names the process for the rows after it
    return true;
  }));
  out(std::to_string(t.writes) + " write(s) and " + std::to_string(t.connections) +
      " connection(s) judged: " + std::to_string(t.to_allowed) + " would be allowed, " +
      std::to_string(t.to_denied) + " denied, " + std::to_string(t.other) +
      " change otherwise; " + std::to_string(t.kept) +
      " decided by no settings entry (kept as recorded)\n");
  return {};
}

}  // namespace vigil::replay
