// The responses the proxy itself writes: the refusal (403 with the reason in the status
// phrase), other errors, and CONNECT's 200; with the status-line text they need.
#include <algorithm>
#include <string>

#include "proxy/http_head.h"
#include "proxy/http_text.h"

namespace vigil::proxy::http {

using detail::append_field;

std::string sanitize_phrase(std::string_view s, std::size_t max) {
  std::string out;
  out.reserve(std::min(s.size(), max));
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    out.push_back(u < 0x20 || u == 0x7f ? ' ' : c);
  }
  if (out.size() > max) {
    std::size_t cut = max;
    // Back up to the start of a UTF-8 sequence so the phrase stays valid text.
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    out.resize(cut);
  }
  return out;
}

std::string_view status_text(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 408:
      return "Request Timeout";
    case 431:
      return "Request Header Fields Too Large";
    case 501:
      return "Not Implemented";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Error";
  }
}

std::string refusal_response(std::string_view reason) {
  const std::string phrase = sanitize_phrase(reason);
  const std::string body =
      "Connection blocked by network allowlist: " + sanitize_phrase(reason, 2000) + "\n";
  std::string out = "HTTP/1.1 403 " + (phrase.empty() ? std::string("Forbidden") : phrase) + "\r\n";
  append_field(&out, "X-Proxy-Error", "blocked-by-allowlist");
  append_field(&out, "Content-Type", "text/plain; charset=utf-8");
  append_field(&out, "Content-Length", std::to_string(body.size()));
  append_field(&out, "Connection", "close");
  out.append("\r\n");
  out.append(body);
  return out;
}

std::string error_response(int status, std::string_view error_kind, std::string_view message) {
  const std::string body = sanitize_phrase(message, 2000) + "\n";
  std::string out =
      "HTTP/1.1 " + std::to_string(status) + " " + std::string(status_text(status)) + "\r\n";
  append_field(&out, "X-Proxy-Error", error_kind);
  append_field(&out, "Content-Type", "text/plain; charset=utf-8");
  append_field(&out, "Content-Length", std::to_string(body.size()));
  append_field(&out, "Connection", "close");
  out.append("\r\n");
  out.append(body);
  return out;
}

std::string_view connect_established() { return "HTTP/1.1 200 Connection Established\r\n\r\n"; }

}  // namespace vigil::proxy::http
