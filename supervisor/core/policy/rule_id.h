// Rule ids: the name a verdict gives for the rule that decided it, the same in every view
// (replay's timeline, --writes, --net, JSON, HTML; `replay --policy`; `vigil learn`), so a
// person can find the entry to change:
//   filesystem.allowWrite[2] "~/.npm"       a settings entry: its JSON path and as written
//   mandatory deny .bashrc                   a protected name (mandatory_denies.h)
//   network.allowedDomains[0] "*.github.com"
//   default deny (outside every writable root)
// Pure functions of the policy; thread-compatible.
#pragma once

#include <string>
#include <string_view>

#include "supervisor/core/policy/policy.h"

namespace vigil {

// `s` in double quotes, with " and \ escaped (the id is one line; callers escape it for
// their output format).
std::string quoted_entry(std::string_view s);

// The id of a filesystem Decision::rule / PlanOp::origin ("filesystem.allowWrite[2]",
// "mandatory: .bashrc", "default", "session temp dir", ...) under `policy`: the entry as
// written is added where the policy lists one with that origin.
std::string fs_rule_id(const Policy& policy, std::string_view origin);

// The id of a mandatory deny by its relpath (".bashrc", ".git/hooks").
std::string mandatory_rule_id(std::string_view relpath);

// The id of an egress verdict: `allowed` with the allowedDomains entry (as written) that
// allowed it, or a refusal by a deniedDomains entry, the default deny (rule ""), or the
// address guard (`refused_by` "address-guard", `guard_check` its check).
std::string net_rule_id(const NetworkPolicy& net, bool allowed, std::string_view rule,
                        std::string_view refused_by, std::string_view guard_check);

inline constexpr std::string_view kDefaultWriteDenyId = "default deny (outside every writable root)";
inline constexpr std::string_view kDefaultNetDenyId =
    "default deny (no network.allowedDomains entry matches)";
inline constexpr std::string_view kRuleNotRecorded = "rule not recorded";

}  // namespace vigil
