// The key table: every key srt 0.0.83's schema accepts at each level vigil reads, plus
// "vigil", each honoured, refused with what to do instead, or of no effect here. The
// loader (policy_loader.cc) checks every object it reads against its level's row.
#include <algorithm>
#include <cctype>
#include <span>
#include <string>
#include <vector>

#include "supervisor/core/policy/policy_keys.h"
#include "supervisor/core/policy/settings_json.h"

namespace vigil {
namespace {

// Every key srt 0.0.83's schema accepts at each level vigil reads, plus "vigil". Order
// is irrelevant. A refusal says what to do instead (docs/srt-compatibility.md lists the
// same table; tests/data/srt_0.0.83_keys.txt is srt's key list it is checked against).
constexpr KeySpec kTopKeys[] = {
    {"network", Support::kHandled, "", ""},
    {"filesystem", Support::kHandled, "", ""},
    {"mandatoryDenySearchDepth", Support::kHandled, "", ""},
    {"bwrapPath", Support::kHandled, "", ""},
    {"enableWeakerNetworkIsolation", Support::kHandled, "", ""},
    {"allowAppleEvents", Support::kHandled, "", ""},
    {"allowPty", Support::kHandled, "", ""},
    {"ignoreViolations", Support::kHandled, "", ""},
    {"vigil", Support::kHandled, "", ""},
    {"credentials", Support::kHandled, "", ""},
    {"enableWeakerNestedSandbox", Support::kHandled, "", ""},
    {"allowNestedUserNamespaces", Support::kUnsupportedIfOn,
     "nested user namespaces would let the command undo the write denies",
     "run a tool that needs its own namespaces (a browser sandbox, podman) outside vigil"},
    {"javaAgentJarPath", Support::kUnsupported, "vigil has no JVM proxy agent",
     "pass the proxy to Java yourself: JAVA_TOOL_OPTIONS=\"-Dhttps.proxyHost=127.0.0.1 "
     "-Dhttps.proxyPort=<port of $HTTPS_PROXY>\""},
    {"git", Support::kHandled, "", ""},
    {"ripgrep", Support::kNotApplicable, "vigil scans for mandatory denies with its own walker",
     ""},
    {"seccomp", Support::kNotApplicable, "vigil installs its own seccomp filters", ""},
    {"socatPath", Support::kNotApplicable, "vigil bridges the proxy without socat", ""},
    {"windows", Support::kNotApplicable, "Windows-only settings", ""},
};

// Said by every key of srt's request callback: what vigil filters requests with instead.
constexpr std::string_view kNoCallback =
    "filter by host with allowedDomains/deniedDomains, and by method and path with "
    "vigil.network.requestRules (terminated hosts)";

constexpr KeySpec kNetworkKeys[] = {
    {"allowedDomains", Support::kHandled, "", ""},
    {"deniedDomains", Support::kHandled, "", ""},
    {"deniedDomainReasons", Support::kHandled, "", ""},
    {"deniedResolvedAddresses", Support::kHandled, "", ""},
    {"allowLocalBinding", Support::kHandled, "", ""},
    {"allowUnixSockets", Support::kHandled, "", ""},
    {"allowMachLookup", Support::kHandled, "", ""},
    {"strictAllowlist", Support::kHandled, "", ""},
    {"allowAllUnixSockets", Support::kHandled, "", ""},
    {"httpProxyPort", Support::kHandled, "", ""},
    {"socksProxyPort", Support::kHandled, "", ""},
    {"mitmProxy", Support::kHandled, "", ""},
    {"filterRequest", Support::kUnsupported,
     "a JavaScript callback, which a settings file cannot hold", kNoCallback},
    {"allowPlaintextHeaderSet", Support::kUnsupported,
     "header sets come from filterRequest, a callback vigil has no equivalent of", kNoCallback},
    {"stripResponseHeaders", Support::kUnsupported,
     "vigil passes response headers through unchanged", kNoCallback},
    {"refuseOpaqueTunnels", Support::kHandled, "", ""},
    {"requireHostMatch", Support::kHandled, "", ""},
    {"ambiguousRequestTarget", Support::kUnsupported,
     "vigil always refuses an ambiguous request target on a host with request rules",
     kNoCallback},
    {"tlsTerminate", Support::kHandled, "", ""},
    {"parentProxy", Support::kHandled, "", ""},
};

// A CA of the user's own would be a key on disk, where a command that can read the
// user's files could read it too: vigil makes its CA in memory for each session.
constexpr std::string_view kOwnCa =
    "vigil makes a per-session CA in memory and never writes its key to disk";
constexpr std::string_view kOwnCaInstead =
    "remove the key: the command trusts vigil's session CA through SSL_CERT_FILE, "
    "NODE_EXTRA_CA_CERTS and their siblings, and extraCaCertPaths adds roots of your own";

constexpr KeySpec kMitmProxyKeys[] = {
    {"socketPath", Support::kHandled, "", ""},
    {"domains", Support::kHandled, "", ""},
};
constexpr KeySpec kTlsTerminateKeys[] = {
    {"caCertPath", Support::kUnsupported, kOwnCa, kOwnCaInstead},
    {"caKeyPath", Support::kUnsupported, kOwnCa, kOwnCaInstead},
    {"excludeDomains", Support::kHandled, "", ""},
    {"extraCaCertPaths", Support::kHandled, "", ""},
    {"maxTunnels", Support::kHandled, "", ""},
    {"handshakeTimeoutMs", Support::kHandled, "", ""},
};

constexpr KeySpec kCredentialsKeys[] = {
    {"files", Support::kHandled, "", ""},
    {"envVars", Support::kHandled, "", ""},
    {"allowPlaintextInject", Support::kUnsupportedIfOn,
     "vigil swaps a secret in only over TLS it terminated and verified upstream",
     "add \"tlsTerminate\": {} to network, and reach the host over https"},
    {"awsPairs", Support::kHandled, "", ""},
    {"sigv4", Support::kHandled, "", ""},
};

constexpr KeySpec kCredentialFileKeys[] = {
    {"path", Support::kHandled, "", ""},
    {"mode", Support::kHandled, "", ""},
    {"extract", Support::kHandled, "", ""},
    {"onExtractNoMatch", Support::kHandled, "", ""},
    {"decode", Support::kHandled, "", ""},
    {"maskClaims", Support::kHandled, "", ""},
    {"maskDuplicates", Support::kHandled, "", ""},
    {"injectHosts", Support::kHandled, "", ""},
};

constexpr KeySpec kCredentialEnvKeys[] = {
    {"name", Support::kHandled, "", ""},
    {"mode", Support::kHandled, "", ""},
    {"extract", Support::kHandled, "", ""},
    {"onExtractNoMatch", Support::kHandled, "", ""},
    {"decode", Support::kHandled, "", ""},
    {"maskClaims", Support::kHandled, "", ""},
    {"injectHosts", Support::kHandled, "", ""},
};

constexpr KeySpec kAwsPairKeys[] = {
    {"accessKeyIdVar", Support::kHandled, "", ""},
    {"secretAccessKeyVar", Support::kHandled, "", ""},
    {"sessionTokenVar", Support::kHandled, "", ""},
};

constexpr KeySpec kSigv4Keys[] = {
    {"streaming", Support::kHandled, "", ""},
    {"presigned", Support::kHandled, "", ""},
    {"sigv4a", Support::kHandled, "", ""},
};

constexpr KeySpec kGitKeys[] = {
    {"safeDirectories", Support::kHandled, "", ""},
};

constexpr KeySpec kParentProxyKeys[] = {
    {"http", Support::kHandled, "", ""},
    {"https", Support::kHandled, "", ""},
    {"noProxy", Support::kHandled, "", ""},
};

constexpr KeySpec kFilesystemKeys[] = {
    {"denyRead", Support::kHandled, "", ""},
    {"allowRead", Support::kHandled, "", ""},
    {"allowWrite", Support::kHandled, "", ""},
    {"denyWrite", Support::kHandled, "", ""},
    {"allowGitConfig", Support::kHandled, "", ""},
    {"disabled", Support::kUnsupportedIfOn, "running without any filesystem policy",
     "run with --sandbox off, which says loudly that nothing is confined"},
};

// vigil's own keys (not srt's).
constexpr KeySpec kVigilKeys[] = {
    {"observer", Support::kHandled, "", ""},
    {"log", Support::kHandled, "", ""},
    {"network", Support::kHandled, "", ""},
    {"limits", Support::kHandled, "", ""},
    {"git", Support::kHandled, "", ""},
    {"capture", Support::kHandled, "", ""},
    {"export", Support::kHandled, "", ""},
};

// vigil.export: read by `vigil export --follow` only (docs/fleet.md).
constexpr KeySpec kVigilExportKeys[] = {
    {"syslog", Support::kHandled, "", ""},
    {"journald", Support::kHandled, "", ""},
    {"spoolMaxBytes", Support::kHandled, "", ""},
};

constexpr KeySpec kVigilExportSyslogKeys[] = {
    {"host", Support::kHandled, "", ""},
    {"port", Support::kHandled, "", ""},
    {"tls", Support::kHandled, "", ""},
    {"ca", Support::kHandled, "", ""},
};

constexpr KeySpec kVigilGitKeys[] = {
    {"writableRepository", Support::kHandled, "", ""},
};

constexpr KeySpec kVigilNetworkKeys[] = {
    {"ask", Support::kHandled, "", ""},
    {"askTimeoutSeconds", Support::kHandled, "", ""},
    {"capture", Support::kHandled, "", ""},
    {"requestRules", Support::kHandled, "", ""},
};

constexpr KeySpec kVigilRequestRuleKeys[] = {
    {"host", Support::kHandled, "", ""},
    {"methods", Support::kHandled, "", ""},
    {"paths", Support::kHandled, "", ""},
};

constexpr KeySpec kVigilLimitsKeys[] = {
    {"processes", Support::kHandled, "", ""},
    {"memoryBytes", Support::kHandled, "", ""},
    {"maxFileBytes", Support::kHandled, "", ""},
    {"timeoutSeconds", Support::kHandled, "", ""},
};

constexpr KeySpec kVigilCaptureKeys[] = {
    {"enabled", Support::kHandled, "", ""},
    {"maxFileBytes", Support::kHandled, "", ""},
    {"maxSessionBytes", Support::kHandled, "", ""},
    {"maxTotalBytes", Support::kHandled, "", ""},
};

constexpr KeySpec kVigilLogKeys[] = {
    {"maxOutputBytes", Support::kHandled, "", ""},
    {"keep", Support::kHandled, "", ""},
};

constexpr KeySpec kVigilObserverKeys[] = {
    {"overflow", Support::kHandled, "", ""},
    {"syncWakeUp", Support::kHandled, "", ""},
    {"reads", Support::kHandled, "", ""},
};

struct KeyLevel {
  std::string_view prefix;
  std::span<const KeySpec> specs;
};
constexpr KeyLevel kLevels[] = {
    {"", kTopKeys},
    {"network", kNetworkKeys},
    {"network.parentProxy", kParentProxyKeys},
    {"network.tlsTerminate", kTlsTerminateKeys},
    {"network.mitmProxy", kMitmProxyKeys},
    {"credentials", kCredentialsKeys},
    {"credentials.files[]", kCredentialFileKeys},
    {"credentials.envVars[]", kCredentialEnvKeys},
    {"credentials.awsPairs[]", kAwsPairKeys},
    {"credentials.sigv4", kSigv4Keys},
    {"git", kGitKeys},
    {"filesystem", kFilesystemKeys},
    {"vigil", kVigilKeys},
    {"vigil.observer", kVigilObserverKeys},
    {"vigil.log", kVigilLogKeys},
    {"vigil.network", kVigilNetworkKeys},
    {"vigil.network.requestRules[]", kVigilRequestRuleKeys},
    {"vigil.limits", kVigilLimitsKeys},
    {"vigil.git", kVigilGitKeys},
    {"vigil.capture", kVigilCaptureKeys},
    {"vigil.export", kVigilExportKeys},
    {"vigil.export.syslog", kVigilExportSyslogKeys},
};

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

std::span<const KeySpec> keys_at(std::string_view prefix) {
  for (const auto& level : kLevels)
    if (level.prefix == prefix) return level.specs;
  return {};
}

std::vector<SettingsKey> settings_key_table() {
  std::vector<SettingsKey> out;
  for (const auto& level : kLevels) {
    for (const auto& spec : level.specs)
      out.push_back({json_path_key(std::string(level.prefix), spec.key), spec});
  }
  return out;
}

std::string refusal(const KeySpec& spec) {
  return "not supported by vigil (" + std::string(spec.what) + "); instead, " +
         std::string(spec.instead);
}

std::string nearest_key(std::string_view key, const std::vector<std::string_view>& candidates) {
  std::string best;
  std::size_t best_d = 0;
  for (const auto c : candidates) {
    const std::size_t d = edit_distance(key, c);
    if (best.empty() || d < best_d) {
      best = std::string(c);
      best_d = d;
    }
  }
  const std::size_t limit = std::max<std::size_t>(2, key.size() / 3);
  return best_d <= limit ? best : std::string();
}

}  // namespace vigil
