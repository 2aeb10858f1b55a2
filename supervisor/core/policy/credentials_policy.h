// srt's `credentials` block and the network keys that go with it (network.tlsTerminate,
// network.mitmProxy, requireHostMatch, refuseOpaqueTunnels), after validation. Plain
// data, built by the loader (policy_loader_credentials.cc); read by the command's
// environment (deny: removed; mask: a sentinel) and by the proxy (proxy/tls_*), which
// alone ever holds a masked value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vigil {

enum class CredentialMode { kDeny, kMask };
// What a masked entry whose `extract` (or decode) finds nothing becomes: srt's
// onExtractNoMatch. kWarn: left as it is, said loudly; kDeny: withheld; kError: no run.
enum class OnExtractNoMatch { kWarn, kDeny, kError };

// What the two kinds of entry share.
struct CredentialRule {
  CredentialMode mode = CredentialMode::kDeny;
  std::string extract;  // ECMAScript regex, group 1 is the secret; "" = whole value
  OnExtractNoMatch on_no_match = OnExtractNoMatch::kWarn;
  bool decode_jwt = false;               // decode: "jwt"
  std::vector<std::string> mask_claims;  // maskClaims (needs decode)
  // injectHosts; none: network.allowedDomains (srt's default).
  std::optional<std::vector<std::string>> inject_hosts;
  std::string origin;  // "credentials.envVars[2]"
  bool operator==(const CredentialRule&) const = default;
};

struct CredentialEnvVar {
  std::string name;
  CredentialRule rule;
  bool operator==(const CredentialEnvVar&) const = default;
};

struct CredentialFile {
  std::string written;  // as in the settings file
  std::string path;     // ~ and relative spellings expanded
  bool mask_duplicates = false;
  CredentialRule rule;
  bool operator==(const CredentialFile&) const = default;
};

// credentials.awsPairs, plus the conventional AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY
// (/ AWS_SESSION_TOKEN) trio when all are masked whole (srt pairs it by itself).
struct AwsPair {
  std::string access_key_id_var;
  std::string secret_access_key_var;
  std::string session_token_var;  // "" = none
  std::string origin;             // "credentials.awsPairs[0]" or "AWS_* (automatic)"
  bool operator==(const AwsPair&) const = default;
};

// credentials.sigv4: what becomes of a request signed with a masked key that the proxy
// cannot re-sign. false: refused with a 403 naming the case (srt's default "deny").
struct Sigv4Shapes {
  bool streaming_passthrough = false;
  bool presigned_passthrough = false;
  bool sigv4a_passthrough = false;
  bool operator==(const Sigv4Shapes&) const = default;
};

struct CredentialsPolicy {
  std::vector<CredentialEnvVar> env_vars;
  std::vector<CredentialFile> files;
  bool allow_plaintext_inject = false;
  std::vector<AwsPair> aws_pairs;
  Sigv4Shapes sigv4;
  bool any_masked() const {
    for (const auto& v : env_vars)
      if (v.rule.mode == CredentialMode::kMask) return true;
    for (const auto& f : files)
      if (f.rule.mode == CredentialMode::kMask) return true;
    return false;
  }
  bool operator==(const CredentialsPolicy&) const = default;
};

// network.mitmProxy: connections to `domains` go to the user's MITM proxy listening on
// `socket_path` (an HTTP proxy on a Unix socket), after vigil's own allow/deny decision.
struct MitmProxySettings {
  std::string socket_path;
  std::vector<std::string> domains;
  bool operator==(const MitmProxySettings&) const = default;
};

// network.tlsTerminate: CONNECTs to allowed hosts outside `exclude_domains` that carry
// TLS are terminated by the proxy with a per-session CA made in memory.
struct TlsTerminateSettings {
  bool enabled = false;
  std::vector<std::string> exclude_domains;
  std::vector<std::string> extra_ca_cert_paths;  // expanded; CERTIFICATE blocks only
  std::uint32_t max_tunnels = 256;
  std::uint32_t handshake_timeout_ms = 10'000;
  bool operator==(const TlsTerminateSettings&) const = default;
};

// vigil.network.requestRules: per host pattern, the methods and path patterns a
// terminated request may use (empty list: any). A request outside them gets a 403.
struct RequestRule {
  std::string host;                   // a domain pattern, as allowedDomains
  std::vector<std::string> methods;   // upper case
  std::vector<std::string> paths;     // "/v1/*" (a trailing * is a prefix), or exact
  std::string origin;                 // "vigil.network.requestRules[0]"
  bool operator==(const RequestRule&) const = default;
};

}  // namespace vigil
