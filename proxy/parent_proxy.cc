#include "proxy/parent_proxy.h"

#include <charconv>

#include "proxy/host_canon.h"

namespace vigil::proxy {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<std::uint16_t> parse_port(std::string_view s) {
  unsigned v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v == 0 || v > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(v);
}

// "host", "host:port", "[v6]", "[v6]:port" -> host (no brackets) and port (0 if none).
bool split_host_port(std::string_view s, std::string* host, std::uint16_t* port) {
  *port = 0;
  if (!s.empty() && s.front() == '[') {
    const auto close = s.find(']');
    if (close == std::string_view::npos) return false;
    *host = std::string(s.substr(1, close - 1));
    s.remove_prefix(close + 1);
    if (s.empty()) return true;
    if (s.front() != ':') return false;
    auto p = parse_port(s.substr(1));
    if (!p) return false;
    *port = *p;
    return true;
  }
  const auto colon = s.rfind(':');
  if (colon != std::string_view::npos && s.find(':') == colon) {
    auto p = parse_port(s.substr(colon + 1));
    if (!p) return false;
    *port = *p;
    s = s.substr(0, colon);
  }
  *host = std::string(s);
  return !host->empty();
}

}  // namespace

std::string ProxyEndpoint::text() const {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Result<ProxyEndpoint> parse_proxy_url(std::string_view url) {
  constexpr std::string_view kScheme = "http://";
  if (url.starts_with("https://")) {
    return make_error(Errc::kInvalidPolicy,
                      "TLS to the parent proxy is not supported; give its http:// address");
  }
  if (!url.starts_with(kScheme)) {
    return make_error(Errc::kInvalidPolicy, "expected \"http://host:port\"");
  }
  std::string_view rest = url.substr(kScheme.size());
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.find('@') != std::string_view::npos) {
    return make_error(Errc::kInvalidPolicy,
                      "user:password in a proxy URL is not supported (it would be a secret in "
                      "the settings and the log); use a proxy that needs no credentials from "
                      "this host");
  }
  if (rest.find_first_of("/?#") != std::string_view::npos) {
    return make_error(Errc::kInvalidPolicy,
                      "a proxy URL has no path; expected \"http://host:port\"");
  }
  ProxyEndpoint e;
  if (!split_host_port(rest, &e.host, &e.port)) {
    return make_error(Errc::kInvalidPolicy, "expected \"http://host:port\"");
  }
  auto canon = canonicalize_host(e.host);
  if (!canon) return make_error(Errc::kInvalidPolicy, "host: " + canon.error().message);
  e.host = canon->text;
  if (e.port == 0) e.port = 80;
  return e;
}

Result<std::vector<NoProxyEntry>> parse_no_proxy(std::string_view list) {
  std::vector<NoProxyEntry> out;
  while (!list.empty()) {
    const auto comma = list.find(',');
    const std::string_view item = trim(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    if (item.empty()) continue;
    NoProxyEntry e;
    if (item == "*") {
      e.all = true;
      out.push_back(std::move(e));
      continue;
    }
    if (item.find('/') != std::string_view::npos) {  // a CIDR block, never with a port
      auto b = parse_address_block(item);
      if (!b)
        return make_error(Errc::kInvalidPolicy,
                          "\"" + std::string(item) + "\": " + b.error().message);
      e.block = std::move(*b);
      out.push_back(std::move(e));
      continue;
    }
    std::string host;
    if (!split_host_port(item, &host, &e.port)) {
      return make_error(Errc::kInvalidPolicy,
                        "\"" + std::string(item) + "\": expected host[:port]");
    }
    if (host.starts_with("*.")) host.erase(0, 2);
    if (host.starts_with(".")) host.erase(0, 1);
    boost::system::error_code ec;
    const auto addr = boost::asio::ip::make_address(host, ec);
    if (!ec) {
      e.block = AddressBlock{addr, addr.is_v4() ? 32u : 128u, std::string(item), "noProxy"};
    } else {
      auto canon = canonicalize_host(host);
      if (!canon) {
        return make_error(Errc::kInvalidPolicy,
                          "\"" + std::string(item) + "\": " + canon.error().message);
      }
      e.suffix = canon->text;
    }
    out.push_back(std::move(e));
  }
  return out;
}

bool no_proxy_matches(const std::vector<NoProxyEntry>& entries, std::string_view host,
                      std::uint16_t port) {
  boost::system::error_code ec;
  const auto addr = boost::asio::ip::make_address(std::string(host), ec);
  for (const auto& e : entries) {
    if (e.all) return true;
    if (e.port != 0 && e.port != port) continue;
    if (e.block) {
      if (!ec && block_contains(*e.block, addr)) return true;
      continue;
    }
    if (ec && (host == e.suffix || (host.size() > e.suffix.size() && host.ends_with(e.suffix) &&
                                    host[host.size() - e.suffix.size() - 1] == '.'))) {
      return true;
    }
  }
  return false;
}

const ProxyEndpoint* ParentRoute::via(NetProto proto, std::string_view host,
                                      std::uint16_t port) const {
  if (no_proxy_matches(no_proxy, host, port)) return nullptr;
  const auto& e = proto == NetProto::kHttp ? http : https;
  return e ? &*e : nullptr;
}

Result<std::optional<ParentRoute>> build_parent_route(const ParentProxySettings& s) {
  if (s.http.empty() && s.https.empty()) return std::optional<ParentRoute>();
  ParentRoute r;
  r.origin = s.origin;
  auto one = [&](const std::string& url, const char* key,
                 std::optional<ProxyEndpoint>* out) -> Result<void> {
    if (url.empty()) return {};
    auto e = parse_proxy_url(url);
    if (!e)
      return make_error(Errc::kInvalidPolicy, s.origin + "." + key + ": " + e.error().message);
    *out = std::move(*e);
    return {};
  };
  VIGIL_TRY_VOID(one(s.http, "http", &r.http));
  VIGIL_TRY_VOID(one(s.https, "https", &r.https));
  if (!r.http) r.http = r.https;
  if (!r.https) r.https = r.http;
  auto np = parse_no_proxy(s.no_proxy);
  if (!np) return make_error(Errc::kInvalidPolicy, s.origin + ".noProxy: " + np.error().message);
  r.no_proxy = std::move(*np);
  return std::optional<ParentRoute>(std::move(r));
}

std::string connect_request(std::string_view host, std::uint16_t port) {
  const bool v6 = host.find(':') != std::string_view::npos;
  const std::string authority =
      (v6 ? "[" + std::string(host) + "]" : std::string(host)) + ":" + std::to_string(port);
  return "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n";
}

Result<int> parse_connect_reply(std::string_view head) {
  const auto eol = head.find("\r\n");
  const std::string_view line = head.substr(0, eol);
  if (eol == std::string_view::npos || !line.starts_with("HTTP/1.") || line.size() < 12 ||
      line[8] != ' ') {
    return make_error(Errc::kSystem, "the parent proxy did not answer with an HTTP status line");
  }
  int code = 0;
  auto [p, ec] = std::from_chars(line.data() + 9, line.data() + 12, code);
  if (ec != std::errc() || p != line.data() + 12 || code < 100 || code > 599 ||
      (line.size() > 12 && line[12] != ' ')) {
    return make_error(Errc::kSystem, "the parent proxy answered with a malformed status line");
  }
  return code;
}

bool MitmRoute::covers(const CanonicalHost& host, std::uint16_t port) const {
  for (const auto& p : domains) {
    if (pattern_matches(p, PatternList::kAllowed, host, port)) return true;
  }
  return false;
}

Result<std::optional<MitmRoute>> build_mitm_route(const std::optional<MitmProxySettings>& s) {
  if (!s) return std::optional<MitmRoute>{};
  MitmRoute r;
  r.socket_path = s->socket_path;
  for (std::size_t i = 0; i < s->domains.size(); ++i) {
    auto p = parse_domain_pattern(s->domains[i], PatternList::kAllowed);
    if (!p) {
      return make_error(Errc::kInvalidPolicy, "network.mitmProxy.domains[" + std::to_string(i) +
                                                  "]: " + p.error().message);
    }
    r.domains.push_back(std::move(p).value());
  }
  return std::optional<MitmRoute>{std::move(r)};
}

}  // namespace vigil::proxy
