#include "proxy/credential_sentinels.h"

#include <sys/random.h>

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <algorithm>
#include <regex>

#include "proxy/host_canon.h"
#include "supervisor/core/base/base64.h"

namespace vigil::proxy {
namespace {

constexpr std::string_view kAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789_-";

void random_bytes(unsigned char* out, std::size_t n) {
  while (n > 0) {
    const ssize_t got = ::getrandom(out, n, 0);
    if (got <= 0) continue;  // EINTR; getrandom never fails otherwise once seeded
    out += got;
    n -= static_cast<std::size_t>(got);
  }
}

std::string uuid4() {
  std::array<unsigned char, 16> b{};
  random_bytes(b.data(), b.size());
  b[6] = static_cast<unsigned char>((b[6] & 0x0f) | 0x40);
  b[8] = static_cast<unsigned char>((b[8] & 0x3f) | 0x80);
  char out[37];
  std::snprintf(out, sizeof out,
                "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return out;
}

// base64url without padding, as a JWT spells its segments.
std::string b64url(std::string_view bytes) {
  std::string s = base64_encode(bytes);
  while (!s.empty() && s.back() == '=') s.pop_back();
  for (auto& c : s) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  return s;
}

std::optional<nlohmann::json> b64url_json(std::string seg) {
  for (auto& c : seg) {
    if (c == '-') c = '+';
    if (c == '_') c = '/';
  }
  while (seg.size() % 4 != 0) seg.push_back('=');
  auto raw = base64_decode(seg);
  if (!raw) return std::nullopt;
  auto j = nlohmann::json::parse(*raw, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

constexpr std::string_view kFakeSignature = "dmlnaWwtZmFrZQ";  // "vigil-fake"

// A JWT: three segments, a header object with "alg", a JSON payload (srt's verifyJwt).
bool is_jwt(std::string_view v, std::vector<std::string>* parts) {
  std::vector<std::string> p;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= v.size(); ++i) {
    if (i == v.size() || v[i] == '.') {
      p.emplace_back(v.substr(start, i - start));
      start = i + 1;
    }
  }
  if (p.size() != 3) return false;
  auto header = b64url_json(p[0]);
  if (!header || !header->is_object() || !header->contains("alg")) return false;
  if (!b64url_json(p[1])) return false;
  *parts = std::move(p);
  return true;
}

std::string fake_jwt() {
  const std::string header = b64url(R"({"alg":"HS256","typ":"JWT"})");
  const nlohmann::json payload = {{"sub", std::string(kSentinelPrefix) + uuid4()},
                                  {"exp", 9999999999LL}};
  return header + "." + b64url(payload.dump()) + "." + std::string(kFakeSignature);
}

}  // namespace

std::string mint_sentinel(std::string_view real) {
  std::string out = std::string(kSentinelPrefix) + uuid4();
  if (real.size() > out.size()) {
    std::string pad(real.size() - out.size(), '\0');
    random_bytes(reinterpret_cast<unsigned char*>(pad.data()), pad.size());
    for (auto& c : pad) c = kAlphabet[static_cast<unsigned char>(c) % kAlphabet.size()];
    out += pad;
  }
  return out;
}

Result<void> SentinelTable::add(SentinelEntry e) {
  std::vector<DomainPattern> compiled;
  for (const auto& h : e.inject_hosts) {
    auto p = parse_domain_pattern(h, PatternList::kAllowed);
    if (!p) {
      return make_error(Errc::kInvalidPolicy,
                        "credential " + e.name + ": injectHosts: " + p.error().message);
    }
    compiled.push_back(std::move(p).value());
  }
  entries_.push_back(std::move(e));
  patterns_.push_back(std::move(compiled));
  return {};
}

bool SentinelTable::covers(std::size_t i, std::string_view host, std::uint16_t port) const {
  auto canon = canonicalize_host(host);
  if (!canon) return false;
  for (const auto& p : patterns_[i]) {
    if (pattern_matches(p, PatternList::kAllowed, *canon, port)) return true;
  }
  return false;
}

std::size_t SentinelTable::substitute(std::string& text, std::string_view host,
                                      std::uint16_t port) const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    const auto& e = entries_[i];
    std::size_t at = text.find(e.sentinel);
    if (at == std::string::npos || !covers(i, host, port)) continue;
    while (at != std::string::npos) {
      text.replace(at, e.sentinel.size(), e.real);
      ++n;
      at = text.find(e.sentinel, at + e.real.size());
    }
  }
  return n;
}

bool SentinelTable::injects_at(std::string_view host, std::uint16_t port) const {
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (covers(i, host, port)) return true;
  }
  return false;
}

bool SentinelTable::entry_injects_at(std::string_view name, std::string_view host,
                                     std::uint16_t port) const {
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].name == name) return covers(i, host, port);
  }
  return false;
}

const SentinelEntry* SentinelTable::by_sentinel(std::string_view s) const {
  for (const auto& e : entries_) {
    if (e.sentinel == s) return &e;
  }
  return nullptr;
}

const SentinelEntry* SentinelTable::by_name(std::string_view name) const {
  for (const auto& e : entries_) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

namespace {

// One masked value (an environment variable's, or a credential file's content) under
// its rule: the fake that replaces it, its sentinels registered in `table` under names
// that start with `key` ("env:NAME", "file:/path").
struct MaskOne {
  const CredentialRule& rule;
  std::string key;
  const std::string& real;
  const std::vector<std::string>& hosts;
  SentinelTable& table;
  bool mask_duplicates = false;
  // srt's pattern for decode "jwt" without extract (a file: tokens inside the text).
  bool spans_default_jwt = false;

  Result<void> reg(const std::string& name, const std::string& sentinel,
                   const std::string& real_value) {
    return table.add({name, sentinel, real_value, hosts});
  }

  // A JWT `token`: a JWT-shaped fake, or (maskClaims) the token with each named string
  // claim replaced by a sentinel, registered as `name`; nullopt when `token` is no JWT or
  // no claim matched.
  Result<std::optional<std::string>> jwt(const std::string& token, const std::string& name) {
    std::vector<std::string> parts;
    if (!is_jwt(token, &parts)) return std::optional<std::string>{};
    std::string fake;
    if (rule.mask_claims.empty()) {
      fake = fake_jwt();
    } else {
      auto payload = b64url_json(parts[1]);
      if (!payload || !payload->is_object()) return std::optional<std::string>{};
      bool any = false;
      for (const auto& claim : rule.mask_claims) {
        auto it = payload->find(claim);
        if (it == payload->end() || !it->is_string()) continue;
        const std::string value = it->get<std::string>();
        const std::string s = mint_sentinel(value);
        VIGIL_TRY_VOID(reg(name + "." + claim, s, value));
        *it = s;
        any = true;
      }
      if (!any) return std::optional<std::string>{};
      fake = parts[0] + "." + b64url(payload->dump()) + "." + std::string(kFakeSignature);
    }
    VIGIL_TRY_VOID(reg(name, fake, token));
    return std::optional<std::string>{fake};
  }

  // The value with group 1 of every match replaced by a sentinel (one per distinct
  // capture; with decode "jwt", only captures that are JWTs); with maskDuplicates, every
  // verbatim copy of a masked capture elsewhere too (longest first, never inside a span
  // already taken). nullopt when nothing was masked. Spans are found on the real value,
  // never on the partly substituted text, so a sentinel is never matched again.
  Result<std::optional<std::string>> extract() {
    static constexpr const char* kJwtPattern =
        "(eyJ[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+)";
    const std::string pattern = rule.extract.empty() ? kJwtPattern : rule.extract;
    const std::regex re(pattern, std::regex::ECMAScript);
    struct Span {
      std::size_t start, end;
      std::string sentinel;
    };
    std::vector<Span> spans;
    std::vector<std::pair<std::string, std::string>> seen;  // capture -> sentinel
    for (auto it = std::sregex_iterator(real.begin(), real.end(), re);
         it != std::sregex_iterator(); ++it) {
      const auto& m = *it;
      if (!m[1].matched || m[1].length() == 0) continue;
      const std::string cap = m[1].str();
      std::string sentinel;
      for (const auto& [c, s] : seen) {
        if (c == cap) sentinel = s;
      }
      if (sentinel.empty()) {
        const std::string name = key + "#" + std::to_string(seen.size());
        if (rule.decode_jwt) {
          auto fake = jwt(cap, name);
          VIGIL_TRY(fake);
          if (!*fake) continue;  // not a JWT: left as it is
          sentinel = **fake;
        } else {
          sentinel = mint_sentinel(cap);
          VIGIL_TRY_VOID(reg(name, sentinel, cap));
        }
        seen.emplace_back(cap, sentinel);
      }
      const auto start = static_cast<std::size_t>(m.position(1));
      spans.push_back({start, start + cap.size(), sentinel});
    }
    if (seen.empty()) return std::optional<std::string>{};
    if (mask_duplicates) {
      auto by_length = seen;
      std::stable_sort(by_length.begin(), by_length.end(), [](const auto& a, const auto& b) {
        return a.first.size() > b.first.size();
      });
      for (const auto& [cap, sentinel] : by_length) {
        for (std::size_t at = real.find(cap); at != std::string::npos;
             at = real.find(cap, at + 1)) {
          const std::size_t end = at + cap.size();
          const bool taken = std::any_of(spans.begin(), spans.end(), [&](const Span& s) {
            return at < s.end && s.start < end;
          });
          if (!taken) spans.push_back({at, end, sentinel});
        }
      }
      std::sort(spans.begin(), spans.end(),
                [](const Span& a, const Span& b) { return a.start < b.start; });
    }
    std::string fake;
    std::size_t pos = 0;
    for (const auto& s : spans) {
      fake.append(real, pos, s.start - pos);
      fake += s.sentinel;
      pos = s.end;
    }
    fake.append(real, pos, std::string::npos);
    return std::optional<std::string>{fake};
  }

  // The fake for the whole value; nullopt when extract/decode found nothing to mask.
  // `whole_name` names the one sentinel of a value masked whole.
  Result<std::optional<std::string>> run(const std::string& whole_name) {
    if (!rule.decode_jwt && rule.extract.empty()) {
      const std::string s = mint_sentinel(real);
      VIGIL_TRY_VOID(reg(whole_name, s, real));
      return std::optional<std::string>{s};
    }
    if (rule.decode_jwt && rule.extract.empty() && !spans_default_jwt) return jwt(real, key);
    return extract();
  }
};

// What becomes of a value nothing was masked in, by onExtractNoMatch: an error, or a
// warning (the caller withholds the value for kDeny).
Result<void> no_match(const CredentialRule& rule, const std::string& what_entry,
                      const std::string& left, std::vector<std::string>* warnings) {
  const std::string what = rule.decode_jwt ? "no JWT with the named claims was found in it"
                                           : "its extract pattern matched nothing";
  switch (rule.on_no_match) {
    case OnExtractNoMatch::kError:
      return make_error(Errc::kInvalidPolicy,
                        rule.origin + " (" + what_entry + "): " + what +
                            " (onExtractNoMatch: \"error\"); fix the pattern, or set "
                            "onExtractNoMatch to \"warn\" or \"deny\"");
    case OnExtractNoMatch::kDeny:
      warnings->push_back(rule.origin + " (" + what_entry + "): " + what + ": " +
                          "it is withheld from the command");
      return {};
    case OnExtractNoMatch::kWarn:
      warnings->push_back(rule.origin + " (" + what_entry + "): " + what + ": " + left);
      return {};
  }
  return {};
}

}  // namespace

Result<MaskedEnvironment> mask_environment(const CredentialsPolicy& creds,
                                           const std::vector<std::string>& allowed_domains,
                                           const std::vector<std::string>& env) {
  MaskedEnvironment out;
  auto value_of = [&](const std::string& name) -> std::optional<std::string> {
    std::optional<std::string> found;
    for (const auto& e : env) {
      if (e.size() > name.size() && e.compare(0, name.size(), name) == 0 && e[name.size()] == '=')
        found = e.substr(name.size() + 1);
    }
    return found;
  };
  for (const auto& v : creds.env_vars) {
    if (v.rule.mode == CredentialMode::kDeny) {
      out.unset.push_back(v.name);
      continue;
    }
    const auto real = value_of(v.name);
    if (!real) continue;  // nothing to protect; setting it would flip presence checks
    const auto& hosts = v.rule.inject_hosts ? *v.rule.inject_hosts : allowed_domains;
    // The table's patterns are host patterns: a ":port" of an allowedDomains entry stays.
    MaskOne one{v.rule, "env:" + v.name, *real, hosts, out.table};
    auto fake = one.run(v.name);
    VIGIL_TRY(fake);
    if (*fake) {
      out.set.emplace_back(v.name, **fake);
      continue;
    }
    VIGIL_TRY_VOID(no_match(v.rule, v.name,
                            "the variable is left UNPROTECTED (its real value is visible to "
                            "the command); fix the pattern, or set onExtractNoMatch to "
                            "\"deny\"",
                            &out.warnings));
    if (v.rule.on_no_match == OnExtractNoMatch::kDeny) out.unset.push_back(v.name);
  }
  return out;
}

Result<MaskedFile> mask_file_content(const CredentialFile& file,
                                     const std::vector<std::string>& allowed_domains,
                                     const std::string& content, SentinelTable* table) {
  MaskedFile out;
  const auto& hosts = file.rule.inject_hosts ? *file.rule.inject_hosts : allowed_domains;
  // Masked whole, a file's final line break stays in the copy and out of the secret, so
  // that `$(cat token)` and a header built from the file carry the value alone.
  const bool whole = file.rule.extract.empty() && !file.rule.decode_jwt;
  std::size_t end = content.size();
  if (whole && end > 0 && content[end - 1] == '\n') --end;
  if (whole && end > 0 && content[end - 1] == '\r') --end;
  const std::string secret = content.substr(0, end);
  if (whole && secret.empty()) return out;  // nothing to protect: left as it is
  MaskOne one{file.rule, "file:" + file.path, whole ? secret : content, hosts, *table,
              file.mask_duplicates, /*spans_default_jwt=*/true};
  auto fake = one.run("file:" + file.path);
  VIGIL_TRY(fake);
  if (*fake) {
    out.fake = std::move(*fake);
    if (whole) *out.fake += content.substr(end);
    return out;
  }
  VIGIL_TRY_VOID(no_match(file.rule, file.path,
                          "the file is hidden from the command (vigil never shows a masked "
                          "file's real content); fix the pattern",
                          &out.warnings));
  return out;
}

std::vector<std::string> apply_masked_environment(std::vector<std::string> env,
                                                  const MaskedEnvironment& masked) {
  auto named = [](const std::string& e, const std::string& name) {
    return e.size() > name.size() && e.compare(0, name.size(), name) == 0 && e[name.size()] == '=';
  };
  std::vector<std::string> out;
  for (auto& e : env) {
    bool drop = false;
    for (const auto& n : masked.unset) drop = drop || named(e, n);
    for (const auto& [n, v] : masked.set) drop = drop || named(e, n);
    if (!drop) out.push_back(std::move(e));
  }
  for (const auto& [n, v] : masked.set) out.push_back(n + "=" + v);
  return out;
}

}  // namespace vigil::proxy
