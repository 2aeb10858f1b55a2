// vigil.network.requestRules judged for one request (request_rules.h), and the query
// redaction of what records keep.
#include "proxy/request_rules.h"

#include <gtest/gtest.h>

namespace vigil::proxy {
namespace {

TEST(RequestRulesTest, AHostWithRulesTakesOnlyWhatTheyAllow) {
  auto rules = compile_request_rules(
      {{"api.example.com", {"GET", "HEAD"}, {"/v1/*", "/health"}, "vigil.network.requestRules[0]"},
       {"*.up.example.com", {"POST"}, {}, "vigil.network.requestRules[1]"}});
  ASSERT_TRUE(rules.ok());
  struct Case {
    const char* host;
    const char* method;
    const char* target;
    bool allowed;
  };
  const Case cases[] = {
      {"api.example.com", "GET", "/v1/repos?x=1", true},
      {"api.example.com", "HEAD", "/health", true},
      {"api.example.com", "GET", "/health/x", false},
      {"api.example.com", "DELETE", "/v1/repos", false},
      {"api.example.com", "GET", "/v1/../admin", false},
      {"api.example.com", "GET", "/v1/%2e%2e/admin", false},
      {"api.example.com", "GET", "//v1/x", false},
      {"a.up.example.com", "POST", "/anything", true},
      {"a.up.example.com", "GET", "/anything", false},
      {"other.example.com", "DELETE", "/x", true},  // no rule names it
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.host) + " " + c.method + " " + c.target);
    const RequestVerdict v = judge_request(*rules, c.host, 443, c.method, c.target);
    EXPECT_EQ(v.allowed, c.allowed) << v.reason;
  }
  const RequestVerdict no = judge_request(*rules, "api.example.com", 443, "DELETE", "/v1/r?t=1");
  EXPECT_EQ(no.rule, "vigil.network.requestRules[0]");
  EXPECT_EQ(no.reason,
            "DELETE /v1/r is not allowed for api.example.com by vigil.network.requestRules");
  EXPECT_EQ(no.fix, R"(add {"host":"api.example.com","methods":["DELETE"],"paths":["/v1/r"]} to vigil.network.requestRules)");
}

TEST(RequestRulesTest, QueryValuesAreRedacted) {
  EXPECT_EQ(redact_query("/a?token=s3cr3t&flag&x=1#frag"), "/a?token=[redacted]&flag&x=[redacted]");
  EXPECT_EQ(redact_query("/plain"), "/plain");
}

}  // namespace
}  // namespace vigil::proxy
