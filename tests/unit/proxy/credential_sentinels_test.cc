// Masked credentials (credential_sentinels.h): srt's sentinel form, the environment the
// command gets (deny unsets, mask replaces: whole, extract groups, JWT), and the table
// that swaps a sentinel back only for the hosts its credential may reach.
#include "proxy/credential_sentinels.h"

#include <gtest/gtest.h>

#include <regex>

#include "supervisor/core/base/base64.h"

namespace vigil::proxy {
namespace {

CredentialEnvVar var(std::string name, CredentialMode mode,
                     std::optional<std::vector<std::string>> hosts = std::nullopt) {
  CredentialEnvVar v;
  v.name = std::move(name);
  v.rule.mode = mode;
  v.rule.inject_hosts = std::move(hosts);
  v.rule.origin = "credentials.envVars[0]";
  return v;
}

std::string value_of(const std::vector<std::string>& env, const std::string& name) {
  for (const auto& e : env) {
    if (e.rfind(name + "=", 0) == 0) return e.substr(name.size() + 1);
  }
  return "<unset>";
}

TEST(CredentialSentinelsTest, SentinelsHaveSrtsFormAndAreLengthMatched) {
  const std::regex form("fake_value_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
  const std::string short_one = mint_sentinel("x");
  EXPECT_TRUE(std::regex_match(short_one, form)) << short_one;
  const std::string real(80, 'r');
  const std::string long_one = mint_sentinel(real);
  EXPECT_EQ(long_one.size(), real.size());
  EXPECT_TRUE(std::regex_match(long_one.substr(0, 47), form));
  EXPECT_NE(mint_sentinel("x"), mint_sentinel("x"));
}

TEST(CredentialSentinelsTest, DenyUnsetsMaskReplacesAndTheTableInjectsOnlyAtItsHosts) {
  CredentialsPolicy c;
  c.env_vars = {var("GH_TOKEN", CredentialMode::kMask, std::vector<std::string>{"api.github.com"}),
                var("NPM_TOKEN", CredentialMode::kDeny), var("ABSENT", CredentialMode::kMask)};
  const std::vector<std::string> env = {"PATH=/bin", "GH_TOKEN=ghp_real", "NPM_TOKEN=npm_real"};
  auto m = mask_environment(c, {"*.github.com", "example.com"}, env);
  ASSERT_TRUE(m.ok()) << m.error().message;
  const auto out = apply_masked_environment(env, *m);
  EXPECT_EQ(value_of(out, "NPM_TOKEN"), "<unset>");
  EXPECT_EQ(value_of(out, "ABSENT"), "<unset>");  // not set outside: stays unset
  EXPECT_EQ(value_of(out, "PATH"), "/bin");
  const std::string sentinel = value_of(out, "GH_TOKEN");
  ASSERT_EQ(sentinel.rfind("fake_value_", 0), 0u) << sentinel;
  std::string head = "Authorization: Bearer " + sentinel + "\r\nX: " + sentinel;
  std::string elsewhere = head;
  EXPECT_EQ(m->table.substitute(head, "api.github.com", 443), 2u);
  EXPECT_EQ(head, "Authorization: Bearer ghp_real\r\nX: ghp_real");
  EXPECT_EQ(m->table.substitute(elsewhere, "example.com", 443), 0u);
  EXPECT_NE(elsewhere.find(sentinel), std::string::npos);
  EXPECT_TRUE(m->table.injects_at("API.GitHub.com", 443));
  EXPECT_FALSE(m->table.injects_at("github.com", 443));
}

TEST(CredentialSentinelsTest, DefaultInjectHostsAreTheAllowList) {
  CredentialsPolicy c;
  c.env_vars = {var("T", CredentialMode::kMask)};
  auto m = mask_environment(c, {"*.example.com"}, {"T=real"});
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->table.injects_at("a.example.com", 443));
  EXPECT_FALSE(m->table.injects_at("example.org", 443));
}

TEST(CredentialSentinelsTest, ExtractMasksOnlyTheGroupAndNoMatchFollowsOnExtractNoMatch) {
  CredentialsPolicy c;
  auto v = var("DATABASE_URL", CredentialMode::kMask);
  v.rule.extract = "://[^:]+:([^@]+)@";
  c.env_vars = {v};
  const std::vector<std::string> env = {"DATABASE_URL=postgres://u:pw123@db:5432/x"};
  auto m = mask_environment(c, {"db.example.com"}, env);
  ASSERT_TRUE(m.ok());
  const std::string fake = value_of(apply_masked_environment(env, *m), "DATABASE_URL");
  EXPECT_TRUE(fake.starts_with("postgres://u:fake_value_")) << fake;
  EXPECT_TRUE(fake.ends_with("@db:5432/x")) << fake;
  EXPECT_EQ(fake.find("pw123"), std::string::npos);
  for (auto [mode, unset, fails] : {std::tuple{OnExtractNoMatch::kWarn, false, false},
                                    std::tuple{OnExtractNoMatch::kDeny, true, false},
                                    std::tuple{OnExtractNoMatch::kError, false, true}}) {
    c.env_vars[0].rule.on_no_match = mode;
    const std::vector<std::string> plain = {"DATABASE_URL=sqlite:///x"};
    auto n = mask_environment(c, {"db.example.com"}, plain);
    ASSERT_EQ(n.ok(), !fails);
    if (fails) {
      EXPECT_NE(n.error().message.find("onExtractNoMatch"), std::string::npos);
      continue;
    }
    const auto e = apply_masked_environment(plain, *n);
    EXPECT_EQ(value_of(e, "DATABASE_URL"), unset ? "<unset>" : "sqlite:///x");
    ASSERT_EQ(n->warnings.size(), 1u);
    EXPECT_EQ(n->warnings[0].find("sqlite"), std::string::npos) << "a warning shows no value";
  }
}

std::string b64url(const std::string& s) {
  std::string o = base64_encode(s);
  while (!o.empty() && o.back() == '=') o.pop_back();
  for (auto& ch : o) ch = ch == '+' ? '-' : ch == '/' ? '_' : ch;
  return o;
}

TEST(CredentialSentinelsTest, AJwtGetsAJwtShapedFakeOrItsClaimsMasked) {
  const std::string real = b64url(R"({"alg":"HS256"})") + "." +
                           b64url(R"({"iss":"ci","secret":"claim-value-1"})") + ".sig";
  CredentialsPolicy c;
  auto v = var("CI_JWT", CredentialMode::kMask);
  v.rule.decode_jwt = true;
  c.env_vars = {v};
  const std::vector<std::string> env = {"CI_JWT=" + real};
  auto whole = mask_environment(c, {"a.example.com"}, env);
  ASSERT_TRUE(whole.ok());
  const std::string fake = value_of(apply_masked_environment(env, *whole), "CI_JWT");
  EXPECT_EQ(std::count(fake.begin(), fake.end(), '.'), 2) << fake;
  EXPECT_NE(fake, real);
  std::string sent = "Bearer " + fake;
  EXPECT_EQ(whole->table.substitute(sent, "a.example.com", 443), 1u);
  EXPECT_EQ(sent, "Bearer " + real);

  c.env_vars[0].rule.mask_claims = {"secret"};
  auto claims = mask_environment(c, {"a.example.com"}, env);
  ASSERT_TRUE(claims.ok());
  const std::string masked = value_of(apply_masked_environment(env, *claims), "CI_JWT");
  const std::string payload = masked.substr(masked.find('.') + 1,
                                            masked.rfind('.') - masked.find('.') - 1);
  std::string p64 = payload;
  for (auto& ch : p64) ch = ch == '-' ? '+' : ch == '_' ? '/' : ch;
  while (p64.size() % 4) p64 += '=';
  const auto decoded = base64_decode(p64);
  ASSERT_TRUE(decoded);
  EXPECT_NE(decoded->find(R"("iss":"ci")"), std::string::npos) << *decoded;
  EXPECT_NE(decoded->find("fake_value_"), std::string::npos) << *decoded;
  EXPECT_EQ(decoded->find("claim-value-1"), std::string::npos) << *decoded;
  // Not a JWT: left as it is, said loudly (srt's fail-open default).
  auto plain = mask_environment(c, {"a.example.com"}, {"CI_JWT=plain"});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->warnings.size(), 1u);
}

}  // namespace
}  // namespace vigil::proxy

namespace vigil::proxy {
namespace {

CredentialFile file(std::string extract = "", bool dups = false) {
  CredentialFile f;
  f.path = "/home/u/.netrc";
  f.rule.mode = CredentialMode::kMask;
  f.rule.extract = std::move(extract);
  f.rule.inject_hosts = std::vector<std::string>{"api.example.com"};
  f.rule.origin = "credentials.files[0]";
  f.mask_duplicates = dups;
  return f;
}

TEST(CredentialFilesTest, AWholeFileIsOneSentinelThatTheInjectHostGetsBack) {
  SentinelTable t;
  const std::string real = "tok_whole_file_secret\n";
  auto m = mask_file_content(file(), {}, real, &t);
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_TRUE(m->fake);
  EXPECT_EQ(m->fake->rfind("fake_value_", 0), 0u);
  EXPECT_EQ(m->fake->find("secret"), std::string::npos);
  // The final line break stays in the copy, out of the secret (`$(cat token)`).
  ASSERT_EQ(m->fake->back(), '\n');
  std::string head = "Authorization: Bearer " + m->fake->substr(0, m->fake->size() - 1);
  std::string other = head;
  EXPECT_EQ(t.substitute(head, "api.example.com", 443), 1u);
  EXPECT_EQ(head, "Authorization: Bearer tok_whole_file_secret");
  EXPECT_EQ(t.substitute(other, "evil.example.net", 443), 0u);
}

TEST(CredentialFilesTest, ExtractReplacesOnlyTheSpansAndMaskDuplicatesTheirCopies) {
  const std::string real =
      "machine api.example.com login me password hunter2-secret\n# backup: hunter2-secret\n";
  for (const bool dups : {false, true}) {
    SentinelTable t;
    auto m = mask_file_content(file("password\\s+(\\S+)", dups), {}, real, &t);
    ASSERT_TRUE(m.ok()) << m.error().message;
    ASSERT_TRUE(m->fake);
    EXPECT_NE(m->fake->find("machine api.example.com login me password fake_value_"),
              std::string::npos)
        << *m->fake;
    // The copy outside the match is masked only with maskDuplicates.
    EXPECT_EQ(m->fake->find("hunter2-secret") != std::string::npos, !dups) << *m->fake;
    ASSERT_EQ(t.entries().size(), 1u);
    EXPECT_EQ(t.entries()[0].real, "hunter2-secret");
  }
}

TEST(CredentialFilesTest, AFileWithoutAMatchGetsNoFakeAndOnExtractNoMatchDecides) {
  SentinelTable t;
  CredentialFile f = file("password\\s+(\\S+)");
  auto warn = mask_file_content(f, {}, "nothing here\n", &t);
  ASSERT_TRUE(warn.ok());
  EXPECT_FALSE(warn->fake);
  ASSERT_EQ(warn->warnings.size(), 1u);
  EXPECT_NE(warn->warnings[0].find("hidden"), std::string::npos) << warn->warnings[0];
  EXPECT_EQ(warn->warnings[0].find("nothing here"), std::string::npos) << "no content shown";
  f.rule.on_no_match = OnExtractNoMatch::kError;
  auto err = mask_file_content(f, {}, "nothing here\n", &t);
  ASSERT_FALSE(err.ok());
  EXPECT_NE(err.error().message.find("onExtractNoMatch"), std::string::npos);
  EXPECT_TRUE(t.empty());
}

TEST(CredentialFilesTest, DecodeJwtMasksOnlyTheTokensInsideAFile) {
  const std::string header = b64url("{\"alg\":\"HS256\",\"typ\":\"JWT\"}");
  const std::string payload = b64url("{\"sub\":\"alice\",\"scope\":\"repo\"}");
  const std::string token = header + "." + payload + ".c2lnbmF0dXJl";
  const std::string real = "{\"token\": \"" + token + "\", \"not\": \"eyJnope.x.y\"}";
  SentinelTable t;
  CredentialFile f = file();
  f.rule.decode_jwt = true;
  auto m = mask_file_content(f, {}, real, &t);
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_TRUE(m->fake);
  EXPECT_EQ(m->fake->find(token), std::string::npos);
  EXPECT_NE(m->fake->find("eyJnope.x.y"), std::string::npos) << "not a JWT: left as it is";
  std::string sent = *m->fake;
  EXPECT_EQ(t.substitute(sent, "api.example.com", 443), 1u);
  EXPECT_EQ(sent, real);
}

}  // namespace
}  // namespace vigil::proxy
