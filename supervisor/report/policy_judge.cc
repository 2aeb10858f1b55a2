#include "supervisor/report/policy_judge.h"

#include "proxy/egress.h"
#include "supervisor/core/policy/mandatory_denies.h"
#include "supervisor/core/policy/path_expand.h"
#include "supervisor/core/policy/rule_id.h"

namespace vigil {
namespace {

// The sandbox's own trees: bwrap mounts a fresh /dev, /proc and /sys whatever the policy.
bool sandbox_own(std::string_view path) {
  return path_is_under(path, "/dev") || path_is_under(path, "/proc") ||
         path_is_under(path, "/sys");
}

// <base>/<session>/tmp/...: a session's temp dir (session_dir.h).
bool in_session_tmp(std::string_view path, std::string_view base) {
  if (base.empty() || !path_is_under(path, base) || path.size() <= base.size()) return false;
  std::string_view rest = path.substr(base.size() + 1);
  const std::size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return false;
  rest.remove_prefix(slash + 1);
  return rest == "tmp" || rest.starts_with("tmp/");
}

// The innermost writable root op over `path`, or nullptr.
const PlanOp* writable_root(const Plan& plan, std::string_view path) {
  const PlanOp* root = nullptr;
  for (const auto& op : plan.ops) {
    if (op.kind == OpKind::kWritable && path_is_under(path, op.path)) root = &op;
  }
  return root;
}

// One path of a call. `creates`: the call makes or replaces the name (the gatekeeper
// refuses a protected name at any depth under a writable root for these).
FsJudged judge_path(const Policy& policy, const Plan& plan, std::string_view path,
                    bool creates) {
  const Decision d = decide(plan, path, Access::kWrite);
  if (d.verdict != Verdict::kAllowed) return {d.verdict, fs_rule_id(policy, d.rule), d.reason};
  const PlanOp* root = writable_root(plan, lexically_normal(path));
  const std::string origin = root != nullptr ? root->origin : d.rule;
  if (creates && root != nullptr) {
    std::string_view rel = path.substr(std::min(path.size(), root->path.size()));
    while (!rel.empty() && rel.front() == '/') rel.remove_prefix(1);
    const MandatoryDeny* m = mandatory_deny_within(rel, policy.fs.allow_git_config);
    // The names inside .git and .gitmodules are left to the git rules (observer/
    // git_rules.h), as the gatekeeper does.
    if (m != nullptr && !m->relpath.starts_with(".git/") && m->relpath != ".gitmodules") {
      return {Verdict::kDenied, mandatory_rule_id(m->relpath),
              "protected name " + std::string(m->relpath) + " (" + std::string(m->why) +
                  "): refused at any depth under a writable root"};
    }
  }
  return {Verdict::kAllowed, fs_rule_id(policy, origin), d.reason};
}

bool creates_name(const events::FsWrite& w) {
  const auto a = events::write_action(w.syscall, w.flags);
  return a != events::WriteAction::kDelete && a != events::WriteAction::kRead;
}

}  // namespace

FsJudged judge_write(const Policy& policy, const Plan& plan, const events::FsWrite& w,
                     std::string_view session_base) {
  const std::string& to = w.resolved;
  if (to.empty() || to[0] != '/')
    return {std::nullopt, "not judged (the path was not resolved)", w.reason};
  if (sandbox_own(to)) return {std::nullopt, "the sandbox's own /dev, /proc and /sys", w.reason};
  // vigil-init performed the call and the kernel refused it for its own reasons (EEXIST,
  // ENOENT, ENOTEMPTY): nothing was written, and no policy changes that.
  if (w.verdict == Verdict::kAllowed && !w.result.empty() && w.result != "0" &&
      w.result != "EROFS" && w.result != "EACCES" && w.result != "EPERM") {
    return {std::nullopt, "no rule (the call failed on its own: " + w.result + ")", w.reason};
  }
  if (w.rule_id.starts_with("session temp dir") || in_session_tmp(to, session_base))
    return {std::nullopt, "session temp dir \"$TMPDIR\"", w.reason};
  FsJudged j = judge_path(policy, plan, to, creates_name(w));
  // A rename or link also changes (or needs) the old name: both sides must be writable.
  const auto action = events::write_action(w.syscall, w.flags);
  if (j.verdict == Verdict::kAllowed && action == events::WriteAction::kRename &&
      !w.from_resolved.empty() && w.from_resolved[0] == '/' && !sandbox_own(w.from_resolved)) {
    FsJudged from = judge_path(policy, plan, w.from_resolved, false);
    if (from.verdict != Verdict::kAllowed) return from;
  }
  return j;
}

NetJudged judge_net(const NetworkPolicy& net, const proxy::DomainMatcher& matcher,
                    const events::NetDecision& d) {
  if (d.rule.starts_with("ask:") || d.proto == events::NetProto::kSocks4)
    return {std::nullopt, net_rule_id(net, false, d.rule, d.refused_by, d.guard_check), d.reason};
  const proxy::TargetDecision t = proxy::decide_target(matcher, d.proto, d.host, d.port);
  const bool allowed = t.allowed();
  // An allowed name whose addresses the guard refused: the guard runs after any allow, so
  // it refuses them again, unless the new entry names the IP itself (address_guard.h).
  if (allowed && d.refused_by == "address-guard" && !t.explicit_ip) {
    return {events::NetVerdict::kDenied, net_rule_id(net, false, "", "address-guard", d.guard_check),
            d.reason};
  }
  return {allowed ? events::NetVerdict::kAllowed : events::NetVerdict::kDenied,
          net_rule_id(net, allowed, t.event.rule, t.event.refused_by, ""),
          t.event.reason};
}

std::string record_rule_id(const Policy& policy, const Plan& plan, const events::FsWrite& w) {
  const FsJudged j = judge_write(policy, plan, w);
  if (!j.verdict || *j.verdict == w.verdict) return j.rule_id;
  return "rule not derived (the sandbox decided: " + w.reason.substr(0, 200) + ")";
}

std::string record_rule_id(const NetworkPolicy& net, const events::NetDecision& d) {
  return net_rule_id(net, d.verdict == events::NetVerdict::kAllowed, d.rule, d.refused_by,
                     d.guard_check);
}

std::string shown_rule_id(const events::FsWrite& w) {
  return w.rule_id.empty() ? std::string(kRuleNotRecorded) : w.rule_id;
}

std::string shown_rule_id(const events::NetDecision& d) {
  if (!d.rule_id.empty()) return d.rule_id;
  return net_rule_id(NetworkPolicy{}, d.verdict == events::NetVerdict::kAllowed, d.rule,
                     d.refused_by, d.guard_check);
}

}  // namespace vigil
