// The egress decision for a (host, port) the sandboxed command asked to reach, from
// network.allowedDomains / deniedDomains / deniedDomainReasons. Decides on names and IP
// literals only; the resolved-address guard (loopback, metadata, ...) runs after an
// allow, elsewhere.
//
// A DomainMatcher is immutable after build(): decide() is const and may be called from
// any number of threads at once.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "proxy/domain_pattern.h"
#include "proxy/host_canon.h"
#include "supervisor/core/events/net.h"
#include "supervisor/core/policy/policy.h"
#include "supervisor/core/base/result.h"

namespace vigil::proxy {

// allowed | denied: the verdict of the one network event model.
using events::NetVerdict;

struct Decision {
  NetVerdict verdict = NetVerdict::kDenied;
  // The entry that decided, exactly as written in the settings file; empty when nothing
  // matched and the default deny applied.
  std::string rule;
  // Model-facing: why, in one line ("host is not on the allow list", the
  // deniedDomainReasons text, ...).
  std::string reason;
};

class DomainMatcher {
 public:
  // Validates and compiles the lists. The first problem is returned with its JSON path:
  //   network.allowedDomains[3]: "*.com": a wildcard must cover at least two labels (...)
  // A deniedDomainReasons key that is not exactly a deniedDomains entry is an error
  // (srt ignores it silently, so a typo would drop the reason the user wrote).
  static Result<DomainMatcher> build(const std::vector<std::string>& allowed,
                                     const std::vector<std::string>& denied,
                                     const std::map<std::string, std::string>& denied_reasons);
  static Result<DomainMatcher> build(const NetworkPolicy& net);

  // deniedDomains first (any match denies), then allowedDomains, else deny.
  Decision decide(const CanonicalHost& host, std::uint16_t port) const;

  const std::vector<DomainPattern>& allowed() const { return allowed_; }
  const std::vector<DomainPattern>& denied() const { return denied_; }

 private:
  DomainMatcher() = default;

  std::vector<DomainPattern> allowed_;
  std::vector<DomainPattern> denied_;
  std::vector<std::string> denied_reasons_;  // parallel to denied_: the reason to give
};

// Model-facing reason texts (also used by tests and the annotation code).
inline constexpr const char* kReasonNotAllowed = "host is not on the allow list";

}  // namespace vigil::proxy
