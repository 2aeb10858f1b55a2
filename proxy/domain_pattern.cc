#include "proxy/domain_pattern.h"

#include <algorithm>
#include <vector>

namespace vigil::proxy {
namespace {

using Kind = DomainPattern::Kind;

Error bad_entry(std::string_view entry, std::string_view problem) {
  return make_error(Errc::kInvalidPolicy, quote_for_message(entry) + ": " + std::string(problem));
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// Problems visible in the raw entry before it is split: a URL or a path is the common
// mistake, and "https://x.com" would otherwise be reported as a bad port.
std::optional<std::string> shape_problem(std::string_view e) {
  if (e.empty()) return "empty entry";
  if (std::any_of(e.begin(), e.end(), is_space)) return "contains whitespace";
  if (e.find("://") != std::string_view::npos) {
    return "is a URL; write only the host (example.com, optionally example.com:443)";
  }
  if (e.find('/') != std::string_view::npos) return "contains a path; write only the host";
  if (e.front() == '.') {
    return "a leading dot is not a wildcard; write *.example.com for the subdomains of example.com";
  }
  return std::nullopt;
}

// "443" -> 443. Only plain decimal 1-65535: no sign, no leading zero, no spaces, so one
// port has one spelling and "0443" cannot be read as octal by some other tool.
Result<std::uint16_t> parse_port(std::string_view s) {
  auto problem = [&](std::string_view what) {
    return make_error(Errc::kInvalidPolicy,
                      "port " + quote_for_message(s) + " " + std::string(what));
  };
  if (s.empty()) return make_error(Errc::kInvalidPolicy, "empty port after ':'");
  if (!std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return problem("is not a number");
  }
  if (s.size() > 1 && s[0] == '0') return problem("has a leading zero");
  if (s.size() > 5) return problem("is out of range (1-65535)");
  unsigned v = 0;
  for (char c : s) v = v * 10 + static_cast<unsigned>(c - '0');
  if (v == 0 || v > 65535) return problem("is out of range (1-65535)");
  return static_cast<std::uint16_t>(v);
}

struct Split {
  std::string_view host;
  std::optional<std::uint16_t> port;
};

// Splits "host[:port]". An IPv6 address must be bracketed: unbracketed, "2001:db8::1:443"
// is itself a valid address, so the entry could silently mean the wrong thing.
Result<Split> split_port(std::string_view e) {
  std::string_view host = e;
  std::string_view port_text;
  bool has_port = false;
  if (e.front() == '[') {
    const auto close = e.find(']');
    if (close == std::string_view::npos)
      return make_error(Errc::kInvalidPolicy, "'[' without a matching ']'");
    host = e.substr(0, close + 1);
    const std::string_view rest = e.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return make_error(Errc::kInvalidPolicy, "unexpected text after ']'");
      has_port = true;
      port_text = rest.substr(1);
    }
  } else {
    const auto colons = std::count(e.begin(), e.end(), ':');
    if (colons > 1) {
      return make_error(Errc::kInvalidPolicy,
                        "more than one ':' (write an IPv6 address in brackets: [2001:db8::1] or "
                        "[2001:db8::1]:443)");
    }
    if (colons == 1) {
      const auto colon = e.find(':');
      host = e.substr(0, colon);
      has_port = true;
      port_text = e.substr(colon + 1);
    }
  }
  if (host.empty()) return make_error(Errc::kInvalidPolicy, "empty host before ':'");
  Split s{host, std::nullopt};
  if (has_port) {
    auto p = parse_port(port_text);
    VIGIL_TRY(p);
    s.port = *p;
  }
  return s;
}

std::vector<std::string_view> split_labels(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const auto dot = s.find('.', start);
    if (dot == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, dot - start));
    start = dot + 1;
  }
}

std::string join_labels(const std::vector<std::string_view>& labels, std::size_t from,
                        std::size_t to) {
  std::string out;
  for (std::size_t i = from; i < to; ++i) {
    if (i > from) out += '.';
    out += detail::ascii_lower(labels[i]);
  }
  return out;
}

// "*.example.com" / "bedrock.*.amazonaws.com". The host part has had its port removed.
Result<DomainPattern> parse_wildcard(std::string_view host) {
  auto fail = [](std::string_view why) {
    return make_error(Errc::kInvalidPolicy, std::string(why));
  };
  if (host.back() == '.') host.remove_suffix(1);  // one root dot, as for hosts
  if (host.size() > kMaxHostLength) return fail("longer than 253 characters");
  const auto labels = split_labels(host);
  std::size_t star = labels.size();
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const std::string_view l = labels[i];
    if (l.find('*') == std::string_view::npos) continue;
    if (l != "*") return fail("a wildcard must be a whole label (*.example.com), not part of one");
    if (star != labels.size()) return fail("only one wildcard label is allowed");
    star = i;
  }
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (i == star) continue;
    if (auto p = detail::name_label_problem(labels[i])) return fail(*p);
  }
  // Two labels after the '*' keep a wildcard inside one registered domain: "*.com" or
  // "api.*.com" would admit hosts anyone can register.
  const std::size_t after = labels.size() - star - 1;
  if (after < 2) {
    return fail(
        star == 0 ? "a wildcard must cover at least two labels (write *.example.com)"
                  : "a wildcard needs at least two labels after it (write bedrock.*.example.com)");
  }
  const std::string suffix = join_labels(labels, star + 1, labels.size());
  if (detail::ends_in_number(suffix)) return fail("a wildcard cannot cover an IP address");

  DomainPattern p;
  p.name = suffix;
  if (star == 0) {
    p.kind = Kind::kAnySubdomain;
  } else {
    p.kind = Kind::kMiddleLabel;
    p.prefix = join_labels(labels, 0, star);
  }
  return p;
}

Result<DomainPattern> parse_host_part(std::string_view host, PatternList list) {
  if (host == "*") {
    if (list == PatternList::kAllowed) {
      return make_error(Errc::kInvalidPolicy,
                        "a bare * (every host) is only accepted in network.deniedDomains; list the "
                        "hosts to allow");
    }
    DomainPattern p;
    p.kind = Kind::kAll;
    return p;
  }
  if (host.find('*') != std::string_view::npos) return parse_wildcard(host);
  auto h = detail::canonicalize_host_unquoted(host);
  VIGIL_TRY(h);
  DomainPattern p;
  if (h->kind == CanonicalHost::Kind::kName) {
    p.kind = Kind::kExact;
    p.name = std::move(h->text);
  } else {
    p.kind = Kind::kIp;
    p.ip = std::move(*h);
  }
  return p;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
bool starts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix;
}

// "*.name": strictly below name, at any depth.
bool is_strict_subdomain(std::string_view host, std::string_view name) {
  return host.size() > name.size() + 1 && ends_with(host, name) &&
         host[host.size() - name.size() - 1] == '.';
}

// "prefix.*.name": exactly one non-empty label between prefix and name.
bool matches_middle(std::string_view host, std::string_view prefix, std::string_view name) {
  if (host.size() < prefix.size() + name.size() + 3) return false;
  if (!starts_with(host, prefix) || host[prefix.size()] != '.') return false;
  if (!ends_with(host, name) || host[host.size() - name.size() - 1] != '.') return false;
  const std::string_view middle =
      host.substr(prefix.size() + 1, host.size() - prefix.size() - name.size() - 2);
  return !middle.empty() && middle.find('.') == std::string_view::npos;
}

// The IPv4 host an address ends up at, if it is one.
const std::string* ipv4_destination(const CanonicalHost& h, bool count_tunnels) {
  if (h.kind == CanonicalHost::Kind::kIPv4) return &h.text;
  if (h.kind == CanonicalHost::Kind::kIPv6 && h.embedded_ipv4 &&
      (count_tunnels || embedding_reaches_ipv4_host(h.embedding))) {
    return &*h.embedded_ipv4;
  }
  return nullptr;
}

bool ip_matches(const CanonicalHost& pattern, PatternList list, const CanonicalHost& host) {
  if (host.kind == CanonicalHost::Kind::kName) return false;
  if (host.kind == pattern.kind && host.text == pattern.text) return true;
  const std::string* want = ipv4_destination(pattern, false);
  const std::string* got = ipv4_destination(host, list == PatternList::kDenied);
  return want != nullptr && got != nullptr && *want == *got;
}

}  // namespace

Result<DomainPattern> parse_domain_pattern(std::string_view entry, PatternList list) {
  if (auto problem = shape_problem(entry)) return bad_entry(entry, *problem);
  auto split = split_port(entry);
  if (!split) return bad_entry(entry, split.error().message);
  auto p = parse_host_part(split->host, list);
  if (!p) return bad_entry(entry, p.error().message);
  p->entry = std::string(entry);
  p->port = split->port;
  return p;
}

std::string DomainPattern::canonical() const {
  std::string out;
  switch (kind) {
    case Kind::kExact:
      out = name;
      break;
    case Kind::kAnySubdomain:
      out = "*." + name;
      break;
    case Kind::kMiddleLabel:
      out = prefix + ".*." + name;
      break;
    case Kind::kIp:
      out = ip.kind == CanonicalHost::Kind::kIPv6 ? "[" + ip.text + "]" : ip.text;
      break;
    case Kind::kAll:
      out = "*";
      break;
  }
  if (port) out += ":" + std::to_string(*port);
  return out;
}

bool pattern_matches(const DomainPattern& pattern, PatternList list, const CanonicalHost& host,
                     std::uint16_t port) {
  if (pattern.port && *pattern.port != port) return false;
  const bool is_name = host.kind == CanonicalHost::Kind::kName;
  switch (pattern.kind) {
    case Kind::kAll:
      return true;
    case Kind::kExact:
      return is_name && host.text == pattern.name;
    case Kind::kAnySubdomain:
      return is_name && is_strict_subdomain(host.text, pattern.name);
    case Kind::kMiddleLabel:
      return is_name && matches_middle(host.text, pattern.prefix, pattern.name);
    case Kind::kIp:
      return ip_matches(pattern.ip, list, host);
  }
  return false;
}

}  // namespace vigil::proxy
