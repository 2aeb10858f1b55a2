#include "proxy/request_rules.h"

#include <nlohmann/json.hpp>

#include "proxy/host_canon.h"

namespace vigil::proxy {
namespace {

std::string_view path_of(std::string_view target) {
  const auto q = target.find_first_of("?#");
  return q == std::string_view::npos ? target : target.substr(0, q);
}

bool ambiguous(std::string_view path) {
  if (path.starts_with("//") || path.find('\\') != std::string_view::npos) return true;
  std::string lower(path);
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.find("%2e") != std::string::npos || lower.find("%5c") != std::string::npos)
    return true;
  // "." or ".." as a whole segment.
  std::size_t start = 0;
  while (start <= path.size()) {
    const auto end = path.find('/', start);
    const auto seg = path.substr(start, end == std::string_view::npos ? std::string_view::npos
                                                                      : end - start);
    if (seg == "." || seg == "..") return true;
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return false;
}

bool path_matches(std::string_view pattern, std::string_view path) {
  if (pattern.ends_with("*")) return path.starts_with(pattern.substr(0, pattern.size() - 1));
  return pattern == path;
}

bool allows(const RequestRule& r, std::string_view method, std::string_view path) {
  bool method_ok = r.methods.empty();
  for (const auto& m : r.methods) method_ok = method_ok || m == method;
  bool path_ok = r.paths.empty();
  for (const auto& p : r.paths) path_ok = path_ok || path_matches(p, path);
  return method_ok && path_ok;
}

}  // namespace

Result<std::vector<CompiledRequestRule>> compile_request_rules(
    const std::vector<RequestRule>& rules) {
  std::vector<CompiledRequestRule> out;
  for (const auto& r : rules) {
    auto p = parse_domain_pattern(r.host, PatternList::kAllowed);
    if (!p) return make_error(Errc::kInvalidPolicy, r.origin + ".host: " + p.error().message);
    out.push_back({r, std::move(p).value()});
  }
  return out;
}

RequestVerdict judge_request(const std::vector<CompiledRequestRule>& rules, std::string_view host,
                             std::uint16_t port, std::string_view method,
                             std::string_view target) {
  RequestVerdict v;
  auto canon = canonicalize_host(host);
  if (!canon) return v;
  std::vector<const CompiledRequestRule*> mine;
  for (const auto& r : rules) {
    if (pattern_matches(r.host, PatternList::kAllowed, *canon, port)) mine.push_back(&r);
  }
  if (mine.empty()) return v;
  const std::string_view path = path_of(target);
  if (ambiguous(path)) {
    v.allowed = false;
    v.rule = mine.front()->rule.origin;
    v.reason = "the request target is ambiguous (dot segments, %2e, \\ or a leading //) on a "
               "host with request rules";
    v.fix = "spell the path plainly";
    return v;
  }
  for (const auto* r : mine) {
    if (allows(r->rule, method, path)) {
      v.rule = r->rule.origin;
      return v;
    }
  }
  v.allowed = false;
  v.rule = mine.front()->rule.origin;
  const std::string h(host);
  v.reason = std::string(method) + " " + std::string(path) + " is not allowed for " + h +
             " by vigil.network.requestRules";
  const nlohmann::json fix = {{"host", h},
                              {"methods", nlohmann::json::array({std::string(method)})},
                              {"paths", nlohmann::json::array({std::string(path)})}};
  v.fix = "add " + fix.dump() + " to vigil.network.requestRules";
  return v;
}

std::string redact_query(std::string_view target) {
  const auto frag = target.find('#');
  if (frag != std::string_view::npos) target = target.substr(0, frag);
  const auto q = target.find('?');
  if (q == std::string_view::npos) return std::string(target);
  std::string out(target.substr(0, q + 1));
  std::string_view rest = target.substr(q + 1);
  bool first = true;
  while (true) {
    const auto amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    if (!first) out += '&';
    first = false;
    const auto eq = pair.find('=');
    out += eq == std::string_view::npos ? std::string(pair)
                                        : std::string(pair.substr(0, eq)) + "=[redacted]";
    if (amp == std::string_view::npos) break;
    rest = rest.substr(amp + 1);
  }
  return out;
}

}  // namespace vigil::proxy
