// AWS Signature Version 4 (AWS4-HMAC-SHA256), written for the TLS helper's re-signing of
// requests signed with a masked key pair (credentials.awsPairs): the client signed with
// the sentinels; the helper signs again with the real key, over the request as it is
// forwarded. HMAC-SHA256 and SHA-256 are OpenSSL's (no hand-written crypto).
//
// Pure but for OpenSSL's digests; vigil-tls only.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vigil::proxy::sigv4 {

// The parts of an Authorization: AWS4-HMAC-SHA256 header.
struct Authorization {
  std::string access_key_id;
  std::string date;     // yyyymmdd of the scope
  std::string region;
  std::string service;
  std::vector<std::string> signed_headers;  // lower case, in the header's order
  std::string signature;
};

// nullopt when `value` is not an AWS4-HMAC-SHA256 authorization.
std::optional<Authorization> parse_authorization(std::string_view value);

struct Request {
  std::string method;
  std::string target;  // path and query, as sent
  std::vector<std::pair<std::string, std::string>> headers;  // as sent
  std::string payload_hash;  // hex SHA-256 of the body, or "UNSIGNED-PAYLOAD"
};

std::string sha256_hex(std::string_view data);

// The canonical request of `r` over `signed_headers` (AWS's definition: the query sorted,
// header values trimmed with inner runs of spaces folded).
std::string canonical_request(const Request& r, const std::vector<std::string>& signed_headers);

// The signature of `r` by `secret` under `a`'s scope, at `amz_date` (yyyymmddThhmmssZ).
std::string signature(const Request& r, const Authorization& a, std::string_view secret,
                      std::string_view amz_date);

// The Authorization header value for `a` signed with `access_key_id` and `sig`.
std::string authorization_value(const Authorization& a, std::string_view access_key_id,
                                std::string_view sig);

}  // namespace vigil::proxy::sigv4
