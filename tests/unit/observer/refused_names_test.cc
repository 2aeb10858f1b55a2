// The missing denyWrite targets vigil-init refuses at the call (issue 19, item 6).
#include "observer/refused_names.h"

#include <gtest/gtest.h>

namespace vigil::init {
namespace {

TEST(RefusedNames, TheNameAndWhatCouldCarryItAreRefusedAnEmptyParentIsNot) {
  const std::vector<RefusedName> refused = {
      {"/ws/config/production.json", "filesystem.denyWrite[0]"}};
  struct Case {
    const char* name;
    Emulation call;
    bool refused;
  };
  const Case cases[] = {
      {"/ws/config/production.json", Emulation::kOpen, true},
      {"/ws/config/production.json", Emulation::kMkdir, true},
      {"/ws/config/production.json", Emulation::kMknod, true},
      {"/ws/config/production.json", Emulation::kLink, true},
      {"/ws/config/production.json", Emulation::kSymlink, true},
      {"/ws/config/production.json", Emulation::kRename, true},
      // An ancestor: a directory renamed or linked there could carry the name along.
      {"/ws/config", Emulation::kRename, true},
      {"/ws/config", Emulation::kSymlink, true},
      {"/ws", Emulation::kRename, true},
      // ... but an empty directory or a file holds nothing.
      {"/ws/config", Emulation::kMkdir, false},
      {"/ws/config", Emulation::kOpen, false},
      {"/ws/config", Emulation::kLink, false},
      // Beside it, below it, or a name that merely starts the same.
      {"/ws/config/dev.json", Emulation::kOpen, false},
      {"/ws/config/dev.json", Emulation::kRename, false},
      {"/ws/config/production.json.bak", Emulation::kOpen, false},
      {"/ws/conf", Emulation::kRename, false},
      {"relative/config", Emulation::kRename, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string why = refused_name_refusal(refused, c.name, c.call);
    EXPECT_EQ(!why.empty(), c.refused) << why;
    if (c.refused) {
      EXPECT_NE(why.find("filesystem.denyWrite[0]"), std::string::npos) << why;
    }
  }
  EXPECT_EQ(refused_name_refusal({}, "/ws/config", Emulation::kRename), "");
}

// Deny globs: a name created after launch that a denyRead/denyWrite glob matches is
// refused, whatever the call; the pattern is anchored at its base (the workspace).
TEST(RefusedNames, AGlobRefusesTheNamesItMatchesCreatedAfterLaunch) {
  const std::vector<RefusedGlob> globs = {{"/ws/**/.env", "filesystem.denyRead[0] \"**/.env\""},
                                          {"/ws/*.pem", "filesystem.denyWrite[1] \"*.pem\""}};
  struct Case {
    const char* name;
    const char* origin;  // nullptr: not refused
  };
  const Case cases[] = {
      {"/ws/.env", "filesystem.denyRead[0]"},  // ** is zero directories too
      {"/ws/sub/dir/.env", "filesystem.denyRead[0]"},
      {"/ws/key.pem", "filesystem.denyWrite[1]"},
      {"/ws/.key.pem", "filesystem.denyWrite[1]"},
      {"/ws/sub/key.pem", nullptr},  // * stays within one component
      {"/ws/sub/.envrc", nullptr},
      {"/ws/sub/.env.example", nullptr},
      {"/elsewhere/.env", nullptr},  // anchored at the glob's base
      {"/ws", nullptr},
      {"sub/.env", nullptr},  // only real, absolute names reach the gate
      {"", nullptr},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string why = refused_glob_refusal(globs, c.name);
    if (c.origin == nullptr) {
      EXPECT_EQ(why, "");
    } else {
      EXPECT_NE(why.find(c.origin), std::string::npos) << why;
      EXPECT_NE(why.find("after launch"), std::string::npos) << why;
    }
  }
  EXPECT_EQ(refused_glob_refusal({}, "/ws/.env"), "");
}

}  // namespace
}  // namespace vigil::init
