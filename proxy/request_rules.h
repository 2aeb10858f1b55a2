// vigil.network.requestRules, judged for one request inside a terminated tunnel: the
// methods and path patterns a host may be sent. A host no rule names is not restricted;
// a host some rule names takes only what one of its rules allows. A path pattern is
// exact, or a prefix when it ends in "*" ("/v1/*"). On such a host an ambiguous target
// (dot segments, "%2e", "\", "//" at the start) is refused: upstreams read those
// differently, so a rule judged on one reading could be got round through another.
//
// Pure; safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/domain_pattern.h"
#include "supervisor/core/base/result.h"
#include "supervisor/core/policy/credentials_policy.h"

namespace vigil::proxy {

struct CompiledRequestRule {
  RequestRule rule;
  DomainPattern host;
};

Result<std::vector<CompiledRequestRule>> compile_request_rules(
    const std::vector<RequestRule>& rules);

struct RequestVerdict {
  bool allowed = true;
  std::string rule;    // the deciding rule's origin ("vigil.network.requestRules[0]"); ""
  std::string reason;  // refusals: one line for the model
  std::string fix;     // refusals: the rule to add, as JSON
};

// `target` is the request target as sent (origin-form).
RequestVerdict judge_request(const std::vector<CompiledRequestRule>& rules, std::string_view host,
                             std::uint16_t port, std::string_view method,
                             std::string_view target);

// The target with every query value replaced by "[redacted]" ("/a?k=[redacted]&f"):
// what records keep of a URL, since query strings carry tokens.
std::string redact_query(std::string_view target);

}  // namespace vigil::proxy
