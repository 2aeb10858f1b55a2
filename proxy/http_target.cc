// Request targets: CONNECT's authority-form and a proxy request's absolute-form, parsed to
// a host (not yet canonicalised) and a port.
#include <algorithm>
#include <cstdint>

#include "proxy/http_head.h"
#include "proxy/http_text.h"

namespace vigil::proxy::http {
namespace {

using detail::err;

TargetParse target_error(int status, std::string message) {
  TargetParse t;
  t.error = err(status, std::move(message));
  return t;
}

// host[:port] or [v6][:port]. `default_port` 0 = the port is required.
TargetParse parse_host_port(std::string_view a, std::uint16_t default_port) {
  TargetParse t;
  std::string_view host;
  std::string_view rest;
  if (!a.empty() && a.front() == '[') {
    const std::size_t close = a.find(']');
    if (close == std::string_view::npos)
      return target_error(400, "unterminated [ in the target host");
    host = a.substr(1, close - 1);
    rest = a.substr(close + 1);
    if (!rest.empty() && rest.front() != ':')
      return target_error(400, "junk after ] in the target host");
  } else {
    const std::size_t colon = a.find(':');
    if (colon != std::string_view::npos && a.find(':', colon + 1) != std::string_view::npos) {
      return target_error(400, "an IPv6 target must be written in brackets");
    }
    host = a.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view{} : a.substr(colon);
  }
  if (host.empty()) return target_error(400, "empty target host");
  std::uint32_t port = default_port;
  if (!rest.empty()) {
    const std::string_view digits = rest.substr(1);
    if (digits.empty()) {
      if (default_port == 0) return target_error(400, "empty target port");
    } else {
      if (digits.size() > 5 ||
          !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return target_error(400, "invalid target port");
      }
      port = 0;
      for (char c : digits) port = port * 10 + static_cast<std::uint32_t>(c - '0');
    }
  }
  if (port == 0 || port > 65535) {
    return target_error(400, default_port == 0 && rest.empty()
                                 ? "CONNECT target needs a port (host:port)"
                                 : "target port out of range (1-65535)");
  }
  t.ok = true;
  t.target.host = std::string(host);
  t.target.port = static_cast<std::uint16_t>(port);
  return t;
}

}  // namespace

TargetParse parse_authority_form(std::string_view target) {
  if (target.find_first_of("/?#@") != std::string_view::npos) {
    return target_error(400, "CONNECT target must be host:port");
  }
  return parse_host_port(target, 0);
}

TargetParse parse_absolute_form(std::string_view target) {
  constexpr std::string_view kHttp = "http://";
  constexpr std::string_view kHttps = "https://";
  if (!target.empty() && target.front() == '/') {
    return target_error(
        400, "origin-form request sent to a proxy: send the absolute URL (http://host/path)");
  }
  if (target.size() >= kHttps.size() && iequals(target.substr(0, kHttps.size()), kHttps)) {
    return target_error(400,
                        "https:// URL sent to an HTTP proxy: use CONNECT (HTTPS_PROXY) for https");
  }
  if (target.size() < kHttp.size() || !iequals(target.substr(0, kHttp.size()), kHttp)) {
    return target_error(
        400, "only http:// URLs can be proxied this way (use CONNECT for anything else)");
  }
  const std::string_view rest = target.substr(kHttp.size());
  const std::size_t auth_end = rest.find_first_of("/?#");
  const std::string_view authority = rest.substr(0, auth_end);
  if (authority.find('@') != std::string_view::npos) {
    return target_error(400, "credentials in the URL (user@host) are not forwarded");
  }
  std::string_view tail =
      auth_end == std::string_view::npos ? std::string_view{} : rest.substr(auth_end);
  if (tail.find('#') != std::string_view::npos)
    return target_error(400, "fragment (#) in the request target");
  TargetParse t = parse_host_port(authority, 80);
  if (!t.ok) return t;
  if (tail.empty()) {
    t.target.origin_form = "/";
  } else if (tail.front() == '?') {
    t.target.origin_form = "/" + std::string(tail);
  } else {
    t.target.origin_form = std::string(tail);
  }
  return t;
}

}  // namespace vigil::proxy::http
