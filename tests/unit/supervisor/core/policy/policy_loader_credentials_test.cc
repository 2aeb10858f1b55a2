// srt's credentials block and its network keys (policy_loader_credentials.cc): what each
// key sets, and every refusal with its JSON path and a fix, as srt 0.0.83's schema
// checks them.
#include <gtest/gtest.h>

#include "supervisor/core/policy/policy_loader.h"

namespace vigil {
namespace {

const LoadContext kCtx{"/nonexistent-vigil/proj", "/nonexistent-vigil/home"};

TEST(PolicyLoaderCredentialsTest, EnvVarsFilesPairsAndSigv4AreRead) {
  auto p = parse_policy(R"({
    "network": {"allowedDomains": ["*.github.com", "api.example.com"], "tlsTerminate": {},
                "requireHostMatch": true, "refuseOpaqueTunnels": true},
    "credentials": {
      "envVars": [
        {"name": "GH_TOKEN", "mode": "mask", "injectHosts": ["api.github.com"]},
        {"name": "DATABASE_URL", "mode": "mask", "extract": "://[^:]+:([^@]+)@",
         "onExtractNoMatch": "deny"},
        {"name": "CI_JWT", "mode": "mask", "decode": "jwt", "maskClaims": ["secret"]},
        {"name": "NPM_TOKEN", "mode": "deny"},
        {"name": "AWS_ACCESS_KEY_ID", "mode": "mask"},
        {"name": "AWS_SECRET_ACCESS_KEY", "mode": "mask"}
      ],
      "files": [{"path": "~/.netrc", "mode": "deny"}],
      "sigv4": {"presigned": "passthrough"}
    }})",
                        "s.json", kCtx);
  ASSERT_TRUE(p.ok()) << p.error().message;
  const auto& c = p->credentials;
  ASSERT_EQ(c.env_vars.size(), 6u);
  EXPECT_EQ(c.env_vars[0].rule.mode, CredentialMode::kMask);
  EXPECT_EQ(c.env_vars[0].rule.inject_hosts, std::vector<std::string>{"api.github.com"});
  EXPECT_EQ(c.env_vars[0].rule.origin, "credentials.envVars[0]");
  EXPECT_EQ(c.env_vars[1].rule.on_no_match, OnExtractNoMatch::kDeny);
  EXPECT_TRUE(c.env_vars[2].rule.decode_jwt);
  EXPECT_EQ(c.env_vars[2].rule.mask_claims, std::vector<std::string>{"secret"});
  EXPECT_EQ(c.env_vars[3].rule.mode, CredentialMode::kDeny);
  EXPECT_FALSE(c.env_vars[3].rule.inject_hosts.has_value());
  ASSERT_EQ(c.files.size(), 1u);
  EXPECT_EQ(c.files[0].path, "/nonexistent-vigil/home/.netrc");
  // A denied file is hidden as a denyRead entry is.
  ASSERT_EQ(p->fs.deny_read.size(), 1u);
  EXPECT_EQ(p->fs.deny_read[0].literal, "/nonexistent-vigil/home/.netrc");
  EXPECT_EQ(p->fs.deny_read[0].origin, "credentials.files[0].path");
  // The conventional AWS pair is paired by itself.
  ASSERT_EQ(c.aws_pairs.size(), 1u);
  EXPECT_EQ(c.aws_pairs[0].access_key_id_var, "AWS_ACCESS_KEY_ID");
  EXPECT_EQ(c.aws_pairs[0].session_token_var, "");
  EXPECT_TRUE(c.sigv4.presigned_passthrough);
  EXPECT_FALSE(c.sigv4.streaming_passthrough);
  EXPECT_TRUE(p->net.tls_terminate.enabled);
  EXPECT_TRUE(p->net.require_host_match);
  EXPECT_TRUE(p->net.refuse_opaque_tunnels);
}

TEST(PolicyLoaderCredentialsTest, TlsTerminateAndRequestRules) {
  auto p = parse_policy(R"({
    "network": {"allowedDomains": ["*.example.com", "internal-mtls.example.net"],
                "deniedDomains": [],
                "tlsTerminate": {"excludeDomains": ["internal-mtls.example.net"],
                                 "extraCaCertPaths": ["/etc/internal-mtls-roots.pem"],
                                 "maxTunnels": 8, "handshakeTimeoutMs": 1000}},
    "vigil": {"network": {"requestRules": [
      {"host": "api.example.com", "methods": ["get", "HEAD"], "paths": ["/v1/*"]}]}}})",
                        "s.json", kCtx);
  ASSERT_TRUE(p.ok()) << p.error().message;
  const auto& t = p->net.tls_terminate;
  EXPECT_EQ(t.exclude_domains, std::vector<std::string>{"internal-mtls.example.net"});
  EXPECT_EQ(t.extra_ca_cert_paths, std::vector<std::string>{"/etc/internal-mtls-roots.pem"});
  EXPECT_EQ(t.max_tunnels, 8u);
  EXPECT_EQ(t.handshake_timeout_ms, 1000u);
  ASSERT_EQ(p->net.request_rules.size(), 1u);
  EXPECT_EQ(p->net.request_rules[0].methods, (std::vector<std::string>{"GET", "HEAD"}));
  EXPECT_EQ(p->net.request_rules[0].paths, std::vector<std::string>{"/v1/*"});
}

TEST(PolicyLoaderCredentialsTest, EveryMistakeIsRefusedWithItsPathAndAFix) {
  struct Case {
    const char* text;
    const char* path;
    const char* says;
  };
  const Case cases[] = {
      {R"({"credentials": {"envVars": [{"name": "A", "mode": "hide"}]}})",
       "credentials.envVars[0].mode", "expected \"deny\""},
      {R"({"credentials": {"envVars": [{"name": "1A", "mode": "deny"}]}})",
       "credentials.envVars[0].name", "environment variable name"},
      {R"({"credentials": {"envVars": [{"name": "A", "mode": "deny", "injectHost": []}]}})",
       "credentials.envVars[0].injectHost", "did you mean injectHosts"},
      {R"({"credentials": {"envVars": [{"name": "A", "mode": "deny"}, {"name": "A", "mode": "deny"}]}})",
       "credentials.envVars[1].name", "listed twice"},
      {R"({"credentials": {"envVars": [{"name": "A", "mode": "mask"}]}})", "credentials",
       "add \"tlsTerminate\": {} to network"},
      {R"({"network": {"tlsTerminate": {}}, "credentials": {"envVars": [{"name": "A", "mode": "mask", "extract": "token"}]}})",
       "credentials.envVars[0].extract", "at least one capturing group"},
      {R"({"network": {"tlsTerminate": {}}, "credentials": {"envVars": [{"name": "A", "mode": "mask", "extract": "(("}]}})",
       "credentials.envVars[0].extract", "not a valid regular expression"},
      {R"({"network": {"tlsTerminate": {}}, "credentials": {"envVars": [{"name": "A", "mode": "mask", "maskClaims": ["x"]}]}})",
       "credentials.envVars[0].maskClaims", "requires decode"},
      {R"({"network": {"tlsTerminate": {}}, "credentials": {"envVars": [{"name": "A", "mode": "mask", "decode": "jwt", "maskClaims": []}]}})",
       "credentials.envVars[0].maskClaims", "explicitly empty"},
      {R"({"network": {"tlsTerminate": {}}, "credentials": {"envVars": [{"name": "A", "mode": "mask", "decode": "base64"}]}})",
       "credentials.envVars[0].decode", "expected \"jwt\""},
      {R"({"network": {"allowedDomains": ["a.example.com"], "tlsTerminate": {}}, "credentials": {"envVars": [{"name": "A", "mode": "mask", "injectHosts": ["b.example.com"]}]}})",
       "credentials.envVars[0].injectHosts[0]", "add it (or a covering wildcard) to allowedDomains"},
      {R"({"network": {"allowedDomains": ["a.example.com"], "tlsTerminate": {}}, "credentials": {"envVars": [{"name": "A", "mode": "mask", "injectHosts": []}]}})",
       "credentials.envVars[0]", "explicitly empty"},
      {R"({"network": {"allowedDomains": ["a.example.com"], "tlsTerminate": {"excludeDomains": ["a.example.com"]}}, "credentials": {"envVars": [{"name": "A", "mode": "mask", "injectHosts": ["a.example.com"]}]}})",
       "credentials.envVars[0].injectHosts[0]", "excludeDomains"},
      {R"({"network": {"allowedDomains": ["a.example.com"], "tlsTerminate": {"excludeDomains": ["*.example.com"]}}, "credentials": {"envVars": [{"name": "A", "mode": "mask"}]}})",
       "credentials.envVars[0]", "could never be injected"},
      {R"({"network": {"tlsTerminate": {}}, "credentials": {"files": [{"path": "~/.aws/", "mode": "mask"}]}})",
       "credentials.files[0].path", "not a directory"},
      {R"({"credentials": {"files": [{"mode": "deny"}]}})", "credentials.files[0].path",
       "expected the path"},
      {R"({"credentials": {"awsPairs": [{"accessKeyIdVar": "K", "secretAccessKeyVar": "S"}]}})",
       "credentials.awsPairs[0].accessKeyIdVar", "with mode \"mask\""},
      {R"({"network": {"tlsTerminate": {}}, "credentials": {"envVars": [{"name": "K", "mode": "mask"}, {"name": "S", "mode": "mask"}], "awsPairs": [{"accessKeyIdVar": "K", "secretAccessKeyVar": "K"}]}})",
       "credentials.awsPairs[0].secretAccessKeyVar", "more than one awsPairs slot"},
      {R"J({"network": {"tlsTerminate": {}}, "credentials": {"envVars": [{"name": "K", "mode": "mask", "extract": "(x)"}, {"name": "S", "mode": "mask"}], "awsPairs": [{"accessKeyIdVar": "K", "secretAccessKeyVar": "S"}]}})J",
       "credentials.awsPairs[0].accessKeyIdVar", "masked whole"},
      {R"({"credentials": {"sigv4": {"streaming": "allow"}}})", "credentials.sigv4.streaming",
       "\"passthrough\""},
      {R"({"credentials": {"injectHosts": []}})", "credentials.injectHosts", "unknown key"},
      {R"({"network": {"tlsTerminate": {"caKeyPath": "/k.pem"}}})",
       "network.tlsTerminate.caKeyPath", "per-session CA in memory"},
      {R"({"network": {"tlsTerminate": {"maxTunnels": 0}}})", "network.tlsTerminate.maxTunnels",
       "from 1 to 65536"},
      {R"({"network": {"mitmProxy": {"socketPath": "/m.sock", "domains": []}}})",
       "network.mitmProxy.domains", "at least one domain pattern"},
      {R"({"network": {"mitmProxy": {"domains": ["a.example.com"]}}})",
       "network.mitmProxy.socketPath", "Unix socket"},
      {R"({"network": {"mitmProxy": {"socketPath": "/m.sock", "domains": ["a.example.com"], "port": 1}}})",
       "network.mitmProxy.port", "unknown key"},
      {R"({"network": {"tlsTerminate": {}, "mitmProxy": {"socketPath": "/m.sock", "domains": ["a.example.com"]}}})",
       "network.mitmProxy", "mutually exclusive"},
      {R"({"network": {"allowedDomains": ["a.example.com"], "mitmProxy": {"socketPath": "/m.sock", "domains": ["a.example.com"]}}, "vigil": {"network": {"requestRules": [{"host": "a.example.com", "methods": ["GET"]}]}}})",
       "vigil.network.requestRules", "network.mitmProxy"},
      {R"({"network": {"requireHostMatch": "yes"}})", "network.requireHostMatch", "a boolean"},
      {R"({"vigil": {"network": {"requestRules": [{"host": "x.example.com", "paths": ["/a"]}]}}})",
       "vigil.network.requestRules[0].host", "not in network.allowedDomains"},
      {R"({"network": {"allowedDomains": ["x.example.com"]}, "vigil": {"network": {"requestRules": [{"host": "x.example.com", "paths": ["a"]}]}}})",
       "vigil.network.requestRules[0].paths[0]", "starts with \"/\""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    auto p = parse_policy(c.text, "s.json", kCtx);
    ASSERT_FALSE(p.ok());
    const std::string& m = p.error().message;
    EXPECT_NE(m.find(std::string(c.path) + ": "), std::string::npos) << m;
    EXPECT_NE(m.find(c.says), std::string::npos) << m;
  }
}

TEST(PolicyLoaderCredentialsTest, PlaintextInjectionIsRefusedAndFalseIsAccepted) {
  auto on = parse_policy(
      R"({"credentials": {"allowPlaintextInject": true, "envVars": [{"name": "A", "mode": "mask"}]}})",
      "s.json", kCtx);
  ASSERT_FALSE(on.ok());
  EXPECT_NE(on.error().message.find("credentials.allowPlaintextInject: not supported by vigil"),
            std::string::npos)
      << on.error().message;
  auto off = parse_policy(R"({"network": {"tlsTerminate": {}}, "credentials":
      {"allowPlaintextInject": false, "envVars": [{"name": "A", "mode": "mask"}]}})",
                          "s.json", kCtx);
  ASSERT_TRUE(off.ok()) << off.error().message;
  EXPECT_TRUE(off->credentials.any_masked());
}

TEST(PolicyLoaderCredentialsTest, AWildcardAllowCoversASubdomainInjectHost) {
  auto p = parse_policy(R"({"network": {"allowedDomains": ["*.github.com:443"], "tlsTerminate": {}},
      "credentials": {"envVars": [{"name": "A", "mode": "mask", "injectHosts": ["api.github.com", "*.api.github.com"]}]}})",
                        "s.json", kCtx);
  ASSERT_TRUE(p.ok()) << p.error().message;
  auto apex = parse_policy(R"({"network": {"allowedDomains": ["*.github.com"], "tlsTerminate": {}},
      "credentials": {"envVars": [{"name": "A", "mode": "mask", "injectHosts": ["github.com"]}]}})",
                           "s.json", kCtx);
  ASSERT_FALSE(apex.ok());
}

}  // namespace
}  // namespace vigil

namespace vigil {
namespace {

// srt's README example of network.tlsTerminate, byte for byte: excluded hosts are
// tunnelled opaquely, extra roots join the command's trust bundle.
TEST(PolicyLoaderCredentialsTest, SrtReadmeTlsTerminateExampleLoads) {
  auto p = load_policy_file(std::string(VIGIL_TEST_DATA_DIR) +
                                "/settings/srt_readme_tls_terminate_example.json",
                            kCtx);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_TRUE(p->net.tls_terminate.enabled);
  EXPECT_EQ(p->net.tls_terminate.exclude_domains,
            std::vector<std::string>{"internal-mtls.example.net"});
  EXPECT_EQ(p->net.tls_terminate.extra_ca_cert_paths,
            std::vector<std::string>{"/etc/internal-mtls-roots.pem"});
  EXPECT_EQ(p->net.allowed_domains,
            (std::vector<std::string>{"*.example.com", "internal-mtls.example.net"}));
}

}  // namespace
}  // namespace vigil

namespace vigil {
namespace {

TEST(PolicyLoaderCredentialsTest, MitmProxyIsReadWithItsSocketExpanded) {
  auto p = parse_policy(R"({"network": {"allowedDomains": ["*.example.com"],
      "mitmProxy": {"socketPath": "~/mitm.sock", "domains": ["api.example.com", "*.internal.org"]}}})",
                        "s.json", kCtx);
  ASSERT_TRUE(p.ok()) << p.error().message;
  ASSERT_TRUE(p->net.mitm_proxy);
  EXPECT_EQ(p->net.mitm_proxy->socket_path, "/nonexistent-vigil/home/mitm.sock");
  EXPECT_EQ(p->net.mitm_proxy->domains,
            (std::vector<std::string>{"api.example.com", "*.internal.org"}));
}

// A masked file is read and bound over at each launch (supervisor/command/
// credential_files.h), not hidden: it is no denyRead entry.
TEST(PolicyLoaderCredentialsTest, AMaskedFileIsKeptForTheLaunchNotHidden) {
  auto p = parse_policy(R"J({"network": {"allowedDomains": ["api.example.com"], "tlsTerminate": {}},
      "credentials": {"files": [{"path": "~/.netrc", "mode": "mask", "extract": "password\\s+(\\S+)",
                                 "maskDuplicates": true, "injectHosts": ["api.example.com"]}]}})J",
                        "s.json", kCtx);
  ASSERT_TRUE(p.ok()) << p.error().message;
  ASSERT_EQ(p->credentials.files.size(), 1u);
  const auto& f = p->credentials.files[0];
  EXPECT_EQ(f.path, "/nonexistent-vigil/home/.netrc");
  EXPECT_EQ(f.rule.mode, CredentialMode::kMask);
  EXPECT_TRUE(f.mask_duplicates);
  EXPECT_EQ(f.rule.extract, "password\\s+(\\S+)");
  EXPECT_TRUE(p->fs.deny_read.empty());
  EXPECT_TRUE(p->warnings.empty());
}

}  // namespace
}  // namespace vigil
