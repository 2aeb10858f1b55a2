// srt's `credentials` block, network.tlsTerminate / mitmProxy / requireHostMatch /
// refuseOpaqueTunnels and vigil.network.requestRules: the Loader's part that reads them
// (policy_loader_detail.h), with srt 0.0.83's cross-checks (sandbox-config.js's
// superRefine), each problem reported with its JSON path and a fix.
#include <regex>
#include <set>

#include "supervisor/core/policy/path_expand.h"
#include "supervisor/core/policy/policy_loader_detail.h"

namespace vigil::detail {
namespace {

bool env_name_ok(std::string_view n) {
  if (n.empty() || std::isdigit(static_cast<unsigned char>(n[0]))) return false;
  for (const char c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

std::string strip_port(const std::string& pattern) {
  if (pattern.empty() || pattern[0] == '[') return pattern;
  const auto colon = pattern.rfind(':');
  if (colon == std::string::npos || pattern.find(':') != colon) return pattern;
  return pattern.substr(0, colon);
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

// Whether every host `pattern` can name is named by one of `list` (ports dropped):
// srt's isInjectHostCoveredByAllowedDomains. "*.x" covers "a.x" and "*.a.x", never "x".
bool pattern_covered(const std::string& pattern, const std::vector<std::string>& list) {
  const std::string p = lower(strip_port(pattern));
  for (const auto& entry : list) {
    const std::string a = lower(strip_port(entry));
    if (a == p) return true;
    if (a.starts_with("*.")) {
      const std::string suffix = a.substr(1);  // ".x"
      const std::string rest = p.starts_with("*.") ? p.substr(1) : p;
      if (rest.size() > suffix.size() && rest.ends_with(suffix)) return true;
    }
  }
  return false;
}

Result<void> Loader::load_tls_keys(const json& net) {
  auto& n = p_->net;
  ok(read_bool(net, "network", "requireHostMatch", &n.require_host_match));
  ok(read_bool(net, "network", "refuseOpaqueTunnels", &n.refuse_opaque_tunnels));
  if (auto it = net.find("mitmProxy"); it != net.end()) ok(load_mitm_proxy(*it));
  if (auto it = net.find("tlsTerminate"); it != net.end()) {
    const std::string sub = "network.tlsTerminate";
    if (!it->is_object()) return type_error(sub, *it, "an object");
#if defined(__APPLE__)
    return fail(sub, "not supported on macOS yet (the Seatbelt backend has no TLS helper); "
                     "remove it, and filter by host with allowedDomains");
#endif
    check_keys(*it, sub, keys_at(sub));
    auto& t = n.tls_terminate;
    t.enabled = true;
    ok(read_strings(*it, sub, "excludeDomains", &t.exclude_domains));
    std::vector<std::string> extra;
    ok(read_strings(*it, sub, "extraCaCertPaths", &extra));
    for (std::size_t i = 0; i < extra.size(); ++i) {
      auto e = expand_settings_path(extra[i], ctx_.cwd, ctx_.home);
      if (!e) {
        ok(fail(json_path_index(json_path_key(sub, "extraCaCertPaths"), i), e.error().message));
        continue;
      }
      t.extra_ca_cert_paths.push_back(std::move(e).value());
    }
    for (auto [key, lo, hi, out] :
         {std::tuple{"maxTunnels", 1u, 65536u, &t.max_tunnels},
          std::tuple{"handshakeTimeoutMs", 100u, 600000u, &t.handshake_timeout_ms}}) {
      auto v = it->find(key);
      if (v == it->end()) continue;
      if (!v->is_number_unsigned() || v->get<std::uint64_t>() < lo ||
          v->get<std::uint64_t>() > hi) {
        ok(fail(json_path_key(sub, key), "expected an integer from " + std::to_string(lo) +
                                             " to " + std::to_string(hi) + ", got " + v->dump()));
        continue;
      }
      *out = static_cast<std::uint32_t>(v->get<std::uint64_t>());
    }
  }
  if (n.mitm_proxy && n.tls_terminate.enabled) {
    return fail("network.mitmProxy",
                "network.tlsTerminate and network.mitmProxy are mutually exclusive (as in "
                "srt): remove one; vigil's own termination masks credentials and applies "
                "request rules without a proxy of yours");
  }
  return {};
}

// network.mitmProxy (srt): {"socketPath": "/path/mitm.sock", "domains": ["api.x.com"]}.
// srt refuses it beside tlsTerminate (sandbox-manager's initialize), and so does vigil:
// a host is either terminated by vigil or handed whole to the user's proxy.
Result<void> Loader::load_mitm_proxy(const json& m) {
  const std::string sub = "network.mitmProxy";
  if (!m.is_object()) return type_error(sub, m, "an object");
  check_keys(m, sub, keys_at(sub));
  MitmProxySettings out;
  auto sock = m.find("socketPath");
  if (sock == m.end() || !sock->is_string() || sock->get_ref<const std::string&>().empty())
    return fail(json_path_key(sub, "socketPath"),
                "expected the path of your MITM proxy's Unix socket (an HTTP proxy that "
                "answers CONNECT)");
  auto expanded = expand_settings_path(sock->get<std::string>(), ctx_.cwd, ctx_.home);
  if (!expanded) return fail(json_path_key(sub, "socketPath"), expanded.error().message);
  out.socket_path = std::move(expanded).value();
  VIGIL_TRY_VOID(read_strings(m, sub, "domains", &out.domains));
  if (!m.contains("domains") || out.domains.empty())
    return fail(json_path_key(sub, "domains"),
                "expected at least one domain pattern to route through the MITM proxy "
                "(as in allowedDomains: \"api.example.com\", \"*.example.com\")");
  p_->net.mitm_proxy = std::move(out);
  return {};
}

// The keys an envVars and a files entry share (mode, extract, ...), at `ep`.
Result<void> Loader::load_credential_rule(const json& e, const std::string& ep,
                                          CredentialRule* r) {
  auto mode = e.find("mode");
  if (mode == e.end() || !mode->is_string() ||
      (mode->get_ref<const std::string&>() != "deny" &&
       mode->get_ref<const std::string&>() != "mask")) {
    return fail(json_path_key(ep, "mode"),
                "expected \"deny\" (withheld) or \"mask\" (a sentinel inside, the real value "
                "sent by the proxy to injectHosts)");
  }
  r->mode = mode->get_ref<const std::string&>() == "mask" ? CredentialMode::kMask
                                                         : CredentialMode::kDeny;
  r->origin = ep;
  if (auto x = e.find("extract"); x != e.end()) {
    const std::string xp = json_path_key(ep, "extract");
    if (!x->is_string()) return type_error(xp, *x, "a regular expression");
    try {
      const std::regex re(x->get<std::string>(), std::regex::ECMAScript);
      if (re.mark_count() < 1) {
        return fail(xp, "must contain at least one capturing group: group 1 is the value to "
                        "mask (e.g. \"token:\\\\s*(\\\\S+)\")");
      }
    } catch (const std::regex_error& err) {
      return fail(xp, std::string("is not a valid regular expression: ") + err.what());
    }
    r->extract = x->get<std::string>();
  }
  if (auto x = e.find("onExtractNoMatch"); x != e.end()) {
    const std::string v = x->is_string() ? x->get<std::string>() : "";
    if (v == "warn") r->on_no_match = OnExtractNoMatch::kWarn;
    else if (v == "deny") r->on_no_match = OnExtractNoMatch::kDeny;
    else if (v == "error") r->on_no_match = OnExtractNoMatch::kError;
    else return fail(json_path_key(ep, "onExtractNoMatch"),
                     "expected \"warn\", \"deny\" or \"error\", got " + x->dump());
  }
  if (auto x = e.find("decode"); x != e.end()) {
    if (!x->is_string() || x->get_ref<const std::string&>() != "jwt")
      return fail(json_path_key(ep, "decode"), "expected \"jwt\", got " + x->dump());
    r->decode_jwt = true;
  }
  if (auto x = e.find("maskClaims"); x != e.end()) {
    const std::string xp = json_path_key(ep, "maskClaims");
    std::vector<std::string> claims;
    if (auto rr = read_strings(e, ep, "maskClaims", &claims); !rr) return rr;
    if (!r->decode_jwt) {
      return fail(xp, "maskClaims requires decode: it names claims inside the decoded "
                      "payload; set decode to \"jwt\", or remove maskClaims to mask the whole "
                      "value");
    }
    if (claims.empty()) {
      return fail(xp, "maskClaims is explicitly empty: no claim would ever be masked; omit "
                      "it to mask the whole token, or list the claims to protect");
    }
    for (std::size_t i = 0; i < claims.size(); ++i) {
      if (claims[i].empty()) return fail(json_path_index(xp, i), "a claim name cannot be empty");
    }
    r->mask_claims = std::move(claims);
  }
  if (e.contains("injectHosts")) {
    std::vector<std::string> hosts;
    if (auto rr = read_strings(e, ep, "injectHosts", &hosts); !rr) return rr;
    const std::string hp = json_path_key(ep, "injectHosts");
    for (std::size_t i = 0; i < hosts.size(); ++i) {
      if (!pattern_covered(hosts[i], p_->net.allowed_domains)) {
        ok(fail(json_path_index(hp, i),
                "injectHosts entry " + json(hosts[i]).dump() +
                    " is not reachable via network.allowedDomains; add it (or a covering "
                    "wildcard) to allowedDomains, or remove it from injectHosts"));
      }
    }
    r->inject_hosts = std::move(hosts);
  }
  return check_masked(*r, ep);
}

// srt's checks of a masked entry against the network keys.
Result<void> Loader::check_masked(const CredentialRule& r, const std::string& ep) {
  if (r.mode != CredentialMode::kMask) return {};
  if (r.inject_hosts && r.inject_hosts->empty()) {
    return fail(ep, "injectHosts is explicitly empty: the credential would be masked but "
                    "never injected; omit injectHosts to default to network.allowedDomains, "
                    "or list the intended hosts");
  }
  const auto& exclude = p_->net.tls_terminate.exclude_domains;
  if (exclude.empty()) return {};
  if (r.inject_hosts) {
    for (std::size_t i = 0; i < r.inject_hosts->size(); ++i) {
      if (pattern_covered((*r.inject_hosts)[i], exclude)) {
        ok(fail(json_path_index(json_path_key(ep, "injectHosts"), i),
                "injectHosts entry " + json((*r.inject_hosts)[i]).dump() +
                    " is entirely covered by network.tlsTerminate.excludeDomains, so it "
                    "would receive the sentinel, never the credential; remove it from one "
                    "of the two lists"));
      }
    }
    return {};
  }
  const auto& allowed = p_->net.allowed_domains;
  const bool all_excluded =
      !allowed.empty() && std::all_of(allowed.begin(), allowed.end(), [&](const auto& a) {
        return pattern_covered(a, exclude);
      });
  if (all_excluded) {
    return fail(ep, "this masked credential has no injectHosts, so it defaults to "
                    "network.allowedDomains, which network.tlsTerminate.excludeDomains covers "
                    "whole: it could never be injected; list injectHosts, or narrow "
                    "excludeDomains");
  }
  return {};
}

Result<void> Loader::load_credentials(const json& c) {
  if (!c.is_object()) return type_error("credentials", c, "an object");
#if defined(__APPLE__)
  // The Seatbelt backend has no TLS helper and hands the command the environment as it
  // is: a credential entry there would be a promise not kept.
  return fail("credentials", "not supported on macOS yet; unset a secret variable before "
                             "`vigil run`, and hide a secret file with filesystem.denyRead");
#endif
  check_keys(c, "credentials", keys_at("credentials"));
  auto& out = p_->credentials;
  ok(read_bool(c, "credentials", "allowPlaintextInject", &out.allow_plaintext_inject));
  if (auto it = c.find("envVars"); it != c.end()) {
    if (!it->is_array()) return type_error("credentials.envVars", *it, "an array of objects");
    for (std::size_t i = 0; i < it->size(); ++i)
      ok(load_credential_env((*it)[i], json_path_index("credentials.envVars", i)));
  }
  if (auto it = c.find("files"); it != c.end()) {
    if (!it->is_array()) return type_error("credentials.files", *it, "an array of objects");
    for (std::size_t i = 0; i < it->size(); ++i)
      ok(load_credential_file((*it)[i], json_path_index("credentials.files", i)));
  }
  if (auto it = c.find("sigv4"); it != c.end()) {
    const std::string sub = "credentials.sigv4";
    if (!it->is_object()) return type_error(sub, *it, "an object");
    check_keys(*it, sub, keys_at(sub));
    for (auto [key, out_flag] : {std::pair{"streaming", &out.sigv4.streaming_passthrough},
                                 std::pair{"presigned", &out.sigv4.presigned_passthrough},
                                 std::pair{"sigv4a", &out.sigv4.sigv4a_passthrough}}) {
      auto v = it->find(key);
      if (v == it->end()) continue;
      if (!v->is_string() || (*v != "deny" && *v != "passthrough")) {
        ok(fail(json_path_key(sub, key), "expected \"deny\" or \"passthrough\", got " + v->dump()));
        continue;
      }
      *out_flag = *v == "passthrough";
    }
  }
  ok(load_aws_pairs(c));
  if (out.any_masked() && !p_->net.tls_terminate.enabled && !out.allow_plaintext_inject) {
    return fail("credentials",
                "credential masking requires network.tlsTerminate, so the real value is sent "
                "only over a verified TLS connection; add \"tlsTerminate\": {} to network");
  }
  return {};
}

Result<void> Loader::load_credential_env(const json& e, const std::string& ep) {
  if (!e.is_object()) return type_error(ep, e, "an object");
  check_keys(e, ep, keys_at("credentials.envVars[]"));
  CredentialEnvVar v;
  auto name = e.find("name");
  if (name == e.end() || !name->is_string() || !env_name_ok(name->get<std::string>())) {
    return fail(json_path_key(ep, "name"),
                "expected an environment variable name (a letter or _, then letters, digits "
                "and _)");
  }
  v.name = name->get<std::string>();
  for (const auto& other : p_->credentials.env_vars) {
    if (other.name == v.name) {
      return fail(json_path_key(ep, "name"), v.name + " is listed twice (first at " +
                                                 other.rule.origin + "); keep one entry");
    }
  }
  VIGIL_TRY_VOID(load_credential_rule(e, ep, &v.rule));
  p_->credentials.env_vars.push_back(std::move(v));
  return {};
}

Result<void> Loader::load_credential_file(const json& e, const std::string& ep) {
  if (!e.is_object()) return type_error(ep, e, "an object");
  check_keys(e, ep, keys_at("credentials.files[]"));
  CredentialFile f;
  auto path = e.find("path");
  if (path == e.end() || !path->is_string() || path->get_ref<const std::string&>().empty()) {
    return fail(json_path_key(ep, "path"), "expected the path of a credential file or directory");
  }
  f.written = path->get<std::string>();
  VIGIL_TRY_VOID(load_credential_rule(e, ep, &f.rule));
  ok(read_bool(e, ep, "maskDuplicates", &f.mask_duplicates));
  if (f.rule.mode == CredentialMode::kMask && f.written.back() == '/') {
    return fail(json_path_key(ep, "path"),
                "mode \"mask\" applies to a single file, not a directory; use mode \"deny\" "
                "for " + json(f.written).dump() + ", or name the credential file inside it");
  }
  if (f.rule.mode == CredentialMode::kDeny || has_glob_chars(f.written)) {
    // Hidden exactly as a denyRead entry (globs included): the same mounts, the same
    // checks at the call.
    if (f.rule.mode == CredentialMode::kMask) {
      return fail(json_path_key(ep, "path"),
                  "a masked file is one file; a pattern cannot be masked (use mode \"deny\")");
    }
    VIGIL_TRY_VOID(load_path(json(f.written), json_path_key(ep, "path"), "credentials.files",
                             false, &p_->fs.deny_read, &p_->fs.deny_read_globs));
    f.path = has_glob_chars(f.written) ? f.written : p_->fs.deny_read.back().literal;
  } else {
    // Read, masked and bound over at each command's launch (supervisor/command/
    // credential_files.h): the command reads the sentinels, never the real bytes.
    auto expanded = expand_settings_path(f.written, ctx_.cwd, ctx_.home);
    if (!expanded) return fail(json_path_key(ep, "path"), expanded.error().message);
    f.path = std::move(expanded).value();
  }
  p_->credentials.files.push_back(std::move(f));
  return {};
}

// credentials.awsPairs, checked as srt does, and the conventional AWS_* trio paired when
// it is masked whole and no pair names it.
Result<void> Loader::load_aws_pairs(const json& c) {
  auto& out = p_->credentials;
  auto masked_whole = [&](const std::string& name) -> const CredentialEnvVar* {
    for (const auto& v : out.env_vars) {
      if (v.name == name && v.rule.mode == CredentialMode::kMask) return &v;
    }
    return nullptr;
  };
  std::set<std::string> seen;
  if (auto it = c.find("awsPairs"); it != c.end()) {
    if (!it->is_array()) return type_error("credentials.awsPairs", *it, "an array of objects");
    for (std::size_t i = 0; i < it->size(); ++i) {
      const json& e = (*it)[i];
      const std::string ep = json_path_index("credentials.awsPairs", i);
      if (!e.is_object()) {
        ok(type_error(ep, e, "an object"));
        continue;
      }
      check_keys(e, ep, keys_at("credentials.awsPairs[]"));
      AwsPair pair;
      pair.origin = ep;
      bool good = true;
      for (auto [key, field, required] :
           {std::tuple{"accessKeyIdVar", &pair.access_key_id_var, true},
            std::tuple{"secretAccessKeyVar", &pair.secret_access_key_var, true},
            std::tuple{"sessionTokenVar", &pair.session_token_var, false}}) {
        const std::string fp = json_path_key(ep, key);
        auto v = e.find(key);
        if (v == e.end() && !required) continue;
        if (v == e.end() || !v->is_string() || !env_name_ok(v->get<std::string>())) {
          good = ok(fail(fp, "expected the name of a credentials.envVars entry")) && good;
          continue;
        }
        const std::string name = v->get<std::string>();
        if (!seen.insert(name).second) {
          good = ok(fail(fp, json(name).dump() + " appears in more than one awsPairs slot; "
                                                 "each variable fills exactly one")) && good;
          continue;
        }
        const CredentialEnvVar* entry = masked_whole(name);
        if (entry == nullptr) {
          good = ok(fail(fp, json(name).dump() +
                                 " does not name a credentials.envVars entry with mode "
                                 "\"mask\"; add one (masking is the opt-in for SigV4 "
                                 "re-signing)")) && good;
        } else if (!entry->rule.extract.empty() || entry->rule.decode_jwt) {
          good = ok(fail(fp, json(name).dump() +
                                 " uses extract/decode, but an AWS pair member must be "
                                 "masked whole: the signer needs the entire real value")) &&
                 good;
        }
        *field = name;
      }
      if (good) out.aws_pairs.push_back(std::move(pair));
    }
  }
  const CredentialEnvVar* id = masked_whole("AWS_ACCESS_KEY_ID");
  const CredentialEnvVar* secret = masked_whole("AWS_SECRET_ACCESS_KEY");
  if (id != nullptr && secret != nullptr && !seen.contains("AWS_ACCESS_KEY_ID") &&
      !seen.contains("AWS_SECRET_ACCESS_KEY") && id->rule.extract.empty() &&
      secret->rule.extract.empty() && !id->rule.decode_jwt && !secret->rule.decode_jwt) {
    AwsPair pair{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "", "AWS_* (automatic)"};
    if (const CredentialEnvVar* t = masked_whole("AWS_SESSION_TOKEN");
        t != nullptr && !seen.contains("AWS_SESSION_TOKEN") && t->rule.extract.empty())
      pair.session_token_var = "AWS_SESSION_TOKEN";
    out.aws_pairs.push_back(std::move(pair));
  }
  return {};
}

// vigil.network.requestRules: [{"host": "api.example.com", "methods": ["GET"],
// "paths": ["/v1/*"]}]. The host must be allowed (a rule for a refused host says nothing).
Result<void> Loader::load_request_rules(const json& v) {
  const std::string sub = "vigil.network.requestRules";
  if (!v.is_array()) return type_error(sub, v, "an array of objects");
#if defined(__APPLE__)
  return fail(sub, "not supported on macOS yet (the Seatbelt backend has no TLS helper); "
                   "remove it, and filter by host with allowedDomains");
#endif
  if (p_->net.mitm_proxy && !v.empty()) {
    return fail(sub, "request rules need vigil's own TLS termination, which network.mitmProxy "
                     "excludes (a host routed to your MITM proxy is its to judge): remove one");
  }
  for (std::size_t i = 0; i < v.size(); ++i) {
    const json& e = v[i];
    const std::string ep = json_path_index(sub, i);
    if (!e.is_object()) {
      ok(type_error(ep, e, "an object"));
      continue;
    }
    check_keys(e, ep, keys_at("vigil.network.requestRules[]"));
    RequestRule r;
    r.origin = ep;
    auto host = e.find("host");
    if (host == e.end() || !host->is_string() || host->get_ref<const std::string&>().empty()) {
      ok(fail(json_path_key(ep, "host"), "expected a host pattern, as in allowedDomains"));
      continue;
    }
    r.host = host->get<std::string>();
    if (!ok(read_strings(e, ep, "methods", &r.methods))) continue;
    if (!ok(read_strings(e, ep, "paths", &r.paths))) continue;
    for (auto& m : r.methods) {
      for (auto& ch : m) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    }
    bool good = true;
    for (std::size_t k = 0; k < r.paths.size(); ++k) {
      if (r.paths[k].empty() || r.paths[k][0] != '/') {
        good = ok(fail(json_path_index(json_path_key(ep, "paths"), k),
                       "a path pattern starts with \"/\" (\"/v1/*\": a trailing * matches "
                       "any rest)")) && good;
      }
    }
    if (!pattern_covered(r.host, p_->net.allowed_domains)) {
      good = ok(fail(json_path_key(ep, "host"),
                     json(r.host).dump() + " is not in network.allowedDomains, so no request "
                                           "reaches it; add it there, or remove the rule")) &&
             good;
    }
    if (good) p_->net.request_rules.push_back(std::move(r));
  }
  return {};
}

}  // namespace vigil::detail
