#include "supervisor/core/policy/rule_id.h"

#include <vector>

namespace vigil {

std::string quoted_entry(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string mandatory_rule_id(std::string_view relpath) {
  return "mandatory deny " + std::string(relpath);
}

std::string fs_rule_id(const Policy& policy, std::string_view origin) {
  if (origin == "default") return std::string(kDefaultWriteDenyId);
  if (origin.starts_with("mandatory: ")) return mandatory_rule_id(origin.substr(11));
  for (const auto* list : {&policy.fs.allow_write, &policy.fs.deny_write, &policy.fs.deny_read,
                           &policy.fs.allow_read}) {
    for (const auto& r : *list) {
      if (r.origin == origin) return std::string(origin) + " " + quoted_entry(r.written);
    }
  }
  for (const auto* list : {&policy.fs.deny_write_globs, &policy.fs.deny_read_globs}) {
    for (const auto& g : *list) {
      if (g.origin == origin) return std::string(origin) + " " + quoted_entry(g.written);
    }
  }
  return std::string(origin);
}

namespace {

// "network.allowedDomains[i] \"entry\"", or without the index when the list does not
// hold it (an entry a session's policy.update added).
std::string listed_id(std::string_view key, const std::vector<std::string>& list,
                      std::string_view rule) {
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list[i] == rule) {
      return std::string(key) + "[" + std::to_string(i) + "] " + quoted_entry(rule);
    }
  }
  return std::string(key) + " " + quoted_entry(rule);
}

}  // namespace

std::string net_rule_id(const NetworkPolicy& net, bool allowed, std::string_view rule,
                        std::string_view refused_by, std::string_view guard_check) {
  if (rule.starts_with("ask:")) return "ask mode (" + std::string(rule.substr(4)) + ")";
  if (refused_by == "address-guard") {
    return "address guard" + (guard_check.empty() ? "" : " (" + std::string(guard_check) + ")");
  }
  if (allowed) {
    if (rule.empty()) return "allowed (no rule recorded)";
    return listed_id("network.allowedDomains", net.allowed_domains, rule);
  }
  if (rule.empty()) {
    if (!refused_by.empty() && refused_by != "not-allowed")
      return "refused (" + std::string(refused_by) + ")";
    return std::string(kDefaultNetDenyId);
  }
  return listed_id("network.deniedDomains", net.denied_domains, rule);
}

}  // namespace vigil
