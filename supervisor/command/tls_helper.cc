#include "supervisor/command/tls_helper.h"

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include <fcntl.h>

#include "supervisor/core/base/write_all.h"
#include "supervisor/launch/init_locator.h"

extern char** environ;

namespace vigil {
namespace {

constexpr int kHelperControl = 3;
constexpr int kStartTimeoutMs = 10'000;

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Only the CERTIFICATE blocks: a key in a combined PEM never reaches the sandbox.
std::string certificate_blocks(const std::string& pem) {
  static constexpr std::string_view kBegin = "-----BEGIN CERTIFICATE-----";
  static constexpr std::string_view kEnd = "-----END CERTIFICATE-----";
  std::string out;
  std::size_t pos = 0;
  while ((pos = pem.find(kBegin, pos)) != std::string::npos) {
    const std::size_t end = pem.find(kEnd, pos);
    if (end == std::string::npos) break;
    out += pem.substr(pos, end + kEnd.size() - pos) + "\n";
    pos = end + kEnd.size();
  }
  return out;
}

}  // namespace

Result<CommandCredentials> command_credentials(
    const Policy& policy, const std::optional<std::vector<std::string>>& env) {
  CommandCredentials out;
  out.env = env;
  if (policy.credentials.env_vars.empty()) return out;
  std::vector<std::string> base;
  if (env) {
    base = *env;
  } else {
    for (char** e = environ; *e != nullptr; ++e) base.emplace_back(*e);
  }
  auto masked = proxy::mask_environment(policy.credentials, policy.net.allowed_domains, base);
  VIGIL_TRY(masked);
  out.env = proxy::apply_masked_environment(std::move(base), *masked);
  out.table = std::move(masked->table);
  out.warnings = std::move(masked->warnings);
  return out;
}

Result<void> write_session_file(const std::string& path, const std::string& text) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!fd) return system_error("cannot create " + path);
  return write_all(fd.get(), text, path);
}

bool needs_tls_helper(const NetworkPolicy& net, bool any_sentinel) {
  return net.tls_terminate.enabled || !net.request_rules.empty() || any_sentinel;
}

Result<TlsHelper> start_tls_helper(const proxy::tlswire::HelperConfig& config) {
  auto exe = locate_vigil_helper("vigil-tls");
  if (!exe) {
    return make_error(Errc::kNotFound,
                      "TLS termination (network.tlsTerminate, masked credentials or request "
                      "rules) needs vigil-tls, which this build lacks: " +
                          exe.error().message + " (build vigil with OpenSSL: libssl-dev)");
  }
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    return system_error("socketpair for vigil-tls");
  UniqueFd ours(sv[0]), theirs(sv[1]);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, theirs.get(), kHelperControl);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  std::string path = *exe;
  char* argv[] = {path.data(), nullptr};
  char* envp[] = {nullptr};
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, path.c_str(), &fa, &attr, argv, envp);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return system_error("cannot start " + path, rc);
  theirs.reset();
  TlsHelper h;
  h.pid = pid;
  h.control = std::move(ours);
  auto fail = [&](Error e) {
    ::kill(pid, SIGKILL);
    reap_tls_helper(pid);
    return e;
  };
  if (auto s = proxy::tlswire::send_message(h.control.get(), proxy::tlswire::encode_config(config));
      !s)
    return fail(s.error());
  pollfd pfd{h.control.get(), POLLIN, 0};
  if (::poll(&pfd, 1, kStartTimeoutMs) != 1)
    return fail(make_error(Errc::kInternal, "vigil-tls did not answer within 10 s"));
  auto answer = proxy::tlswire::recv_message(h.control.get(), nullptr, 64 * 1024);
  if (!answer) return fail(answer.error());
  const auto j = nlohmann::json::parse(*answer, nullptr, false);
  if (j.is_object() && j.contains("ca") && j["ca"].is_string()) {
    h.ca_pem = j["ca"].get<std::string>();
    return h;
  }
  const std::string why = j.is_object() && j.contains("error") && j["error"].is_string()
                              ? j["error"].get<std::string>()
                              : "vigil-tls ended without its CA";
  return fail(make_error(Errc::kInvalidPolicy, why));
}

void reap_tls_helper(pid_t pid) {
  if (pid <= 0) return;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

std::string trust_bundle(const std::string& ca_pem, const std::vector<std::string>& extra) {
  std::string out;
  for (const char* p : {"/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt",
                        "/etc/ssl/cert.pem"}) {
    out = certificate_blocks(read_all(p));
    if (!out.empty()) break;
  }
  for (const auto& e : extra) out += certificate_blocks(read_all(e));
  return out + ca_pem;
}

std::vector<std::pair<std::string, std::string>> trust_environment(const std::string& bundle_path) {
  return {{"SSL_CERT_FILE", bundle_path},      {"NODE_EXTRA_CA_CERTS", bundle_path},
          {"REQUESTS_CA_BUNDLE", bundle_path}, {"CURL_CA_BUNDLE", bundle_path},
          {"GIT_SSL_CAINFO", bundle_path}};
}

}  // namespace vigil
