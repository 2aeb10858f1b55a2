// A recorded write or network decision judged under a policy, with the rule id of the
// verdict (supervisor/core/policy/rule_id.h), by the same decision code `vigil run` uses: the
// filesystem plan (core/fs/path_verdict.h: build_plan + decide) with the gatekeeper's refusal of
// protected names at any depth under a writable root (observer/protected_names.h), and
// the proxy's egress decision (proxy/egress.h: decide_target over the DomainMatcher).
//
// Used twice: when a session records a verdict (its rule_id field), and by
// `vigil replay --policy NEW.json` to tell what another policy would have decided.
// Pure functions of their arguments; thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "proxy/domain_matcher.h"
#include "supervisor/core/policy/policy.h"
#include "supervisor/core/fs/path_verdict.h"
#include "supervisor/core/events/event_schema.h"

namespace vigil {

struct FsJudged {
  // nullopt: no settings entry decides this write (the sandbox's own /dev, /proc, /sys;
  // the session's temp dir, writable under every policy; a path vigil-init could not
  // resolve): the recorded verdict stands whatever the policy.
  std::optional<Verdict> verdict;
  std::string rule_id;
  std::string reason;
};

// `session_base`: where session directories live (supervisor/launch/session_base.h: session_base_dir()), to
// recognise a session temp dir in a log that predates rule ids; "" = none.
FsJudged judge_write(const Policy& policy, const Plan& plan, const events::FsWrite& w,
                     std::string_view session_base = {});

struct NetJudged {
  // nullopt: not the allowlist's to decide (ask mode's answers, a SOCKS4 request no
  // policy serves): the recorded verdict stands.
  std::optional<events::NetVerdict> verdict;
  std::string rule_id;
  std::string reason;
};

NetJudged judge_net(const NetworkPolicy& net, const proxy::DomainMatcher& matcher,
                    const events::NetDecision& d);

// The rule id a session records with its own verdict: the judged one when it agrees
// with what happened, else "rule not derived (...)" naming the recorded reason.
std::string record_rule_id(const Policy& policy, const Plan& plan, const events::FsWrite& w);
std::string record_rule_id(const NetworkPolicy& net, const events::NetDecision& d);

// What every replay view shows for a record's rule: its rule_id, or (a log written before
// rule ids) what the record itself says (a network entry without its index), or
// "rule not recorded".
std::string shown_rule_id(const events::FsWrite& w);
std::string shown_rule_id(const events::NetDecision& d);

}  // namespace vigil
