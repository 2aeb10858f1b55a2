// The "always" answer's edit of a settings file: the entry goes first into
// network.allowedDomains (made when missing) and every other byte stays as written.
#include "supervisor/agent/settings_edit.h"

#include <gtest/gtest.h>

#include <string>

namespace vigil {
namespace {

struct Case {
  const char* name;
  std::string before;
  std::string after;
};

TEST(SettingsEdit, InsertsTheEntryAndKeepsTheRest) {
  const Case cases[] = {
      {"into a list", "{\"network\": {\"allowedDomains\": [\"a.test\"]}}\n",
       "{\"network\": {\"allowedDomains\": [\"x.test:443\", \"a.test\"]}}\n"},
      {"into an empty list", "{\"network\": {\"allowedDomains\": [ ]}}",
       "{\"network\": {\"allowedDomains\": [\"x.test:443\" ]}}"},
      {"no list", "{\n  \"network\": {\"deniedDomains\": [\"b.test\"]}\n}",
       "{\n  \"network\": {\"allowedDomains\": [\"x.test:443\"], \"deniedDomains\": "
       "[\"b.test\"]}\n}"},
      {"empty network", "{\"network\": {}}",
       "{\"network\": {\"allowedDomains\": [\"x.test:443\"]}}"},
      {"no network", "  {\"filesystem\": {\"allowWrite\": [\".\"]}}",
       "  {\"network\": {\"allowedDomains\": [\"x.test:443\"]}, \"filesystem\": {\"allowWrite\": "
       "[\".\"]}}"},
      {"empty file object", "{}", "{\"network\": {\"allowedDomains\": [\"x.test:443\"]}}"},
      {"already there", "{\"network\": {\"allowedDomains\": [\"x.test:443\"]}}",
       "{\"network\": {\"allowedDomains\": [\"x.test:443\"]}}"},
      {"nested arrays elsewhere",
       "{\"filesystem\": {\"denyRead\": [\"[\"]}, \"network\": {\"allowedDomains\": [\"a\"]}}",
       "{\"filesystem\": {\"denyRead\": [\"[\"]}, \"network\": {\"allowedDomains\": "
       "[\"x.test:443\", \"a\"]}}"},
  };
  for (const auto& c : cases) {
    auto got = add_allowed_domain(c.before, "x.test:443", "s.json");
    ASSERT_TRUE(got) << c.name << ": " << got.error().message;
    EXPECT_EQ(*got, c.after) << c.name;
  }
}

TEST(SettingsEdit, RefusesWhatIsNotASettingsObject) {
  for (const char* bad :
       {"[]", "{\"network\": []}", "{\"network\": {\"allowedDomains\": {}}}", "{", ""}) {
    auto got = add_allowed_domain(bad, "x.test:443", "s.json");
    EXPECT_FALSE(got) << bad;
    if (!got) {
      EXPECT_NE(got.error().message.find("s.json"), std::string::npos) << bad;
    }
  }
}

}  // namespace
}  // namespace vigil
