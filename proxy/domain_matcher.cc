#include "proxy/domain_matcher.h"

#include <utility>

namespace vigil::proxy {
namespace {

std::string list_path(PatternList list, std::size_t index) {
  return std::string(list == PatternList::kAllowed ? "network.allowedDomains["
                                                   : "network.deniedDomains[") +
         std::to_string(index) + "]";
}

std::string reason_path(const std::string& key) {
  return "network.deniedDomainReasons[" + quote_for_message(key) + "]";
}

Result<std::vector<DomainPattern>> parse_list(const std::vector<std::string>& entries,
                                              PatternList list) {
  std::vector<DomainPattern> out;
  out.reserve(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    auto p = parse_domain_pattern(entries[i], list);
    if (!p) return make_error(Errc::kInvalidPolicy, list_path(list, i) + ": " + p.error().message);
    out.push_back(std::move(*p));
  }
  return out;
}

// The reason is shown to the model inside the violation block, one line per refusal;
// a newline or escape sequence in it could forge lines of that block.
bool is_one_printable_line(const std::string& s) {
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return false;
  }
  return true;
}

std::string default_deny_reason(const std::string& entry) {
  return "denied by network.deniedDomains entry " + quote_for_message(entry);
}

}  // namespace

Result<DomainMatcher> DomainMatcher::build(
    const std::vector<std::string>& allowed, const std::vector<std::string>& denied,
    const std::map<std::string, std::string>& denied_reasons) {
  DomainMatcher m;
  auto a = parse_list(allowed, PatternList::kAllowed);
  VIGIL_TRY(a);
  m.allowed_ = std::move(*a);
  auto d = parse_list(denied, PatternList::kDenied);
  VIGIL_TRY(d);
  m.denied_ = std::move(*d);

  m.denied_reasons_.reserve(m.denied_.size());
  for (const auto& p : m.denied_) m.denied_reasons_.push_back(default_deny_reason(p.entry));

  for (const auto& [key, text] : denied_reasons) {
    bool found = false;
    for (std::size_t i = 0; i < m.denied_.size(); ++i) {
      if (m.denied_[i].entry == key) {
        m.denied_reasons_[i] = text;
        found = true;
      }
    }
    if (!found) {
      // Keys are matched exactly, as srt does; when the key is another spelling of an
      // entry ("GitHub.com" for "github.com"), say which one.
      std::string hint;
      if (auto k = parse_domain_pattern(key, PatternList::kDenied)) {
        for (const auto& p : m.denied_) {
          if (p.canonical() == k->canonical()) {
            hint = "; did you mean " + quote_for_message(p.entry) + "?";
            break;
          }
        }
      }
      return make_error(Errc::kInvalidPolicy,
                        reason_path(key) + ": no network.deniedDomains entry is spelled " +
                            quote_for_message(key) + " (keys must match an entry exactly" + hint +
                            ")");
    }
    if (text.empty())
      return make_error(Errc::kInvalidPolicy, reason_path(key) + ": the reason is empty");
    if (!is_one_printable_line(text)) {
      return make_error(
          Errc::kInvalidPolicy,
          reason_path(key) + ": the reason must be one line without control characters");
    }
  }
  return m;
}

Result<DomainMatcher> DomainMatcher::build(const NetworkPolicy& net) {
  return build(net.allowed_domains, net.denied_domains, net.denied_domain_reasons);
}

Decision DomainMatcher::decide(const CanonicalHost& host, std::uint16_t port) const {
  for (std::size_t i = 0; i < denied_.size(); ++i) {
    if (pattern_matches(denied_[i], PatternList::kDenied, host, port)) {
      return Decision{NetVerdict::kDenied, denied_[i].entry, denied_reasons_[i]};
    }
  }
  for (const auto& p : allowed_) {
    if (pattern_matches(p, PatternList::kAllowed, host, port)) {
      return Decision{NetVerdict::kAllowed, p.entry,
                      "allowed by network.allowedDomains entry " + quote_for_message(p.entry)};
    }
  }
  return Decision{NetVerdict::kDenied, std::string(), kReasonNotAllowed};
}

}  // namespace vigil::proxy
