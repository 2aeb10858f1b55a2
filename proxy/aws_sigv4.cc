#include "proxy/aws_sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cctype>

namespace vigil::proxy::sigv4 {
namespace {

std::string hex(const unsigned char* p, std::size_t n) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (std::size_t i = 0; i < n; ++i) {
    out += kHex[p[i] >> 4];
    out += kHex[p[i] & 0xf];
  }
  return out;
}

std::string hmac(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len);
  return std::string(reinterpret_cast<char*>(out), len);
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string trim_fold(std::string_view v) {
  std::string out;
  bool space = false;
  for (const char c : v) {
    if (c == ' ' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

std::string_view trim(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == ',')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == ',')) v.remove_suffix(1);
  return v;
}

}  // namespace

std::string sha256_hex(std::string_view data) {
  unsigned char out[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), out);
  return hex(out, sizeof out);
}

std::optional<Authorization> parse_authorization(std::string_view value) {
  constexpr std::string_view kAlg = "AWS4-HMAC-SHA256 ";
  if (!value.starts_with(kAlg)) return std::nullopt;
  value.remove_prefix(kAlg.size());
  Authorization a;
  std::string credential, signed_headers;
  while (!value.empty()) {
    const auto comma = value.find(',');
    const std::string_view part = trim(value.substr(0, comma));
    value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
    const auto eq = part.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    const std::string_view k = part.substr(0, eq), v = part.substr(eq + 1);
    if (k == "Credential") credential = v;
    else if (k == "SignedHeaders") signed_headers = v;
    else if (k == "Signature") a.signature = v;
  }
  // AKID/date/region/service/aws4_request
  std::vector<std::string> scope;
  std::size_t start = 0;
  while (start <= credential.size()) {
    const auto slash = credential.find('/', start);
    scope.push_back(credential.substr(start, slash == std::string::npos ? slash : slash - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  if (scope.size() != 5 || scope[4] != "aws4_request" || signed_headers.empty())
    return std::nullopt;
  a.access_key_id = scope[0];
  a.date = scope[1];
  a.region = scope[2];
  a.service = scope[3];
  start = 0;
  while (start <= signed_headers.size()) {
    const auto semi = signed_headers.find(';', start);
    a.signed_headers.push_back(
        lower(signed_headers.substr(start, semi == std::string::npos ? semi : semi - start)));
    if (semi == std::string::npos) break;
    start = semi + 1;
  }
  return a;
}

std::string canonical_request(const Request& r, const std::vector<std::string>& signed_headers) {
  const auto q = r.target.find('?');
  const std::string path = q == std::string::npos ? r.target : r.target.substr(0, q);
  std::vector<std::pair<std::string, std::string>> params;
  if (q != std::string::npos) {
    std::string_view rest = std::string_view(r.target).substr(q + 1);
    while (!rest.empty()) {
      const auto amp = rest.find('&');
      const std::string_view p = rest.substr(0, amp);
      const auto eq = p.find('=');
      if (!p.empty()) {
        params.emplace_back(std::string(p.substr(0, eq)),
                            eq == std::string_view::npos ? "" : std::string(p.substr(eq + 1)));
      }
      rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    }
  }
  std::sort(params.begin(), params.end());
  std::string query;
  for (const auto& [k, v] : params) query += (query.empty() ? "" : "&") + k + "=" + v;
  std::string headers, names;
  for (const auto& name : signed_headers) {
    std::string value;
    bool first = true;
    for (const auto& [k, v] : r.headers) {
      if (lower(k) != name) continue;
      value += (first ? "" : ",") + trim_fold(v);
      first = false;
    }
    headers += name + ":" + value + "\n";
    names += (names.empty() ? "" : ";") + name;
  }
  return r.method + "\n" + (path.empty() ? "/" : path) + "\n" + query + "\n" + headers + "\n" +
         names + "\n" + r.payload_hash;
}

std::string signature(const Request& r, const Authorization& a, std::string_view secret,
                      std::string_view amz_date) {
  const std::string scope = a.date + "/" + a.region + "/" + a.service + "/aws4_request";
  const std::string to_sign = "AWS4-HMAC-SHA256\n" + std::string(amz_date) + "\n" + scope +
                              "\n" + sha256_hex(canonical_request(r, a.signed_headers));
  std::string key = hmac("AWS4" + std::string(secret), a.date);
  key = hmac(key, a.region);
  key = hmac(key, a.service);
  key = hmac(key, "aws4_request");
  const std::string sig = hmac(key, to_sign);
  return hex(reinterpret_cast<const unsigned char*>(sig.data()), sig.size());
}

std::string authorization_value(const Authorization& a, std::string_view access_key_id,
                                std::string_view sig) {
  std::string names;
  for (const auto& n : a.signed_headers) names += (names.empty() ? "" : ";") + n;
  return "AWS4-HMAC-SHA256 Credential=" + std::string(access_key_id) + "/" + a.date + "/" +
         a.region + "/" + a.service + "/aws4_request, SignedHeaders=" + names +
         ", Signature=" + std::string(sig);
}

}  // namespace vigil::proxy::sigv4
