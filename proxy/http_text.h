// Small text helpers shared by the HTTP head files (http_head.cc, http_target.cc,
// http_framing.cc, http_reply.cc). Internal to proxy/: include proxy/http_head.h.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "proxy/head_error.h"

namespace vigil::proxy::http::detail {

inline HeadError err(int status, std::string message) {
  return HeadError{status, std::move(message)};
}

// OWS (SP / HTAB) trimmed from both ends.
inline std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// "Name: value\r\n" appended to a head being built.
inline void append_field(std::string* out, std::string_view name, std::string_view value) {
  out->append(name);
  out->append(": ");
  out->append(value);
  out->append("\r\n");
}

}  // namespace vigil::proxy::http::detail
