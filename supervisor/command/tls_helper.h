// vigil-tls, started for one command's proxy when it terminates TLS (proxy/tls_handoff.h
// says when), and the trust the command is given for it: a bundle of the system's roots,
// network.tlsTerminate.extraCaCertPaths' certificates and the session CA's certificate,
// named by the variables clients read (SSL_CERT_FILE, NODE_EXTRA_CA_CERTS,
// REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE, GIT_SSL_CAINFO).
//
// The helper is started with an empty environment and no argument: the secrets and
// rules reach it over its control socket only, never /proc/PID/environ or cmdline.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "proxy/tls_wire.h"
#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/core/policy/policy.h"

namespace vigil {

// A command's environment under credentials.envVars: `env` (none: vigil's own) with the
// denied variables removed and the masked ones replaced by sentinels, and the table of
// real values for the proxy. With no credentials.envVars, `env` as it was.
struct CommandCredentials {
  std::optional<std::vector<std::string>> env;
  proxy::SentinelTable table;
  std::vector<std::string> warnings;
};
Result<CommandCredentials> command_credentials(const Policy& policy,
                                               const std::optional<std::vector<std::string>>& env);

// Writes a new file (never over an existing one or through a link), mode 0644.
Result<void> write_session_file(const std::string& path, const std::string& text);

struct TlsHelper {
  UniqueFd control;    // the proxy's end; closing it ends the helper
  pid_t pid = -1;      // reaped by reap_tls_helper
  std::string ca_pem;  // the session CA's certificate
};

// Whether a command under `net` (with `sentinels` masked) needs the helper.
bool needs_tls_helper(const NetworkPolicy& net, bool any_sentinel);

// Starts vigil-tls (next to vigil) with `config` and waits for its CA (10 s at most).
Result<TlsHelper> start_tls_helper(const proxy::tlswire::HelperConfig& config);
void reap_tls_helper(pid_t pid);

// The bundle's text: the first system bundle found, the CERTIFICATE blocks of each
// extra file (a missing or unreadable one is skipped, as srt does), the session CA.
std::string trust_bundle(const std::string& ca_pem, const std::vector<std::string>& extra);

// The variables that point clients at `bundle_path`. Pure.
std::vector<std::pair<std::string, std::string>> trust_environment(const std::string& bundle_path);

}  // namespace vigil
