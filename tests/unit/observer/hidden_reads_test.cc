// vigil.observer.reads: which names are hidden by the sandbox's read layout (a table), and
// the fast path on the spelling alone.
#include "observer/hidden_reads.h"

#include <gtest/gtest.h>

namespace vigil::init {
namespace {

const std::vector<HiddenPath> kLayout = {
    {"/home/u/.ssh", "filesystem.denyRead[0]", true},
    {"/home/u/.ssh/known_hosts", "filesystem.allowRead[0]", false},  // bound back in
    {"/home/u/.aws/credentials", "filesystem.denyRead[1]", true},    // a file
    {"/ws/secrets", "filesystem.denyRead[2]", true},
    {"/ws/secrets/public", "filesystem.allowWrite[1]", false},
    {"/ws/secrets/public/keys", "filesystem.denyRead[3]", true},  // hidden again, deeper
};

TEST(HiddenReads, TheDeepestEntryHoldingThePathDecides) {
  struct Case {
    const char* path;
    const char* origin;  // nullptr: not hidden
  };
  const Case cases[] = {
      {"/home/u/.ssh", "filesystem.denyRead[0]"},
      {"/home/u/.ssh/id_ed25519", "filesystem.denyRead[0]"},
      {"/home/u/.ssh/sub/dir/x", "filesystem.denyRead[0]"},
      {"/home/u/.ssh/known_hosts", nullptr},
      {"/home/u/.ssh/known_hosts.old", "filesystem.denyRead[0]"},  // component-wise
      {"/home/u/.aws/credentials", "filesystem.denyRead[1]"},
      {"/home/u/.aws/config", nullptr},
      {"/home/u/.sshx", nullptr},
      {"/home/u", nullptr},
      {"/ws/secrets/a", "filesystem.denyRead[2]"},
      {"/ws/secrets/public/readme", nullptr},
      {"/ws/secrets/public/keys/k", "filesystem.denyRead[3]"},
      {"/", nullptr},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.path);
    const HiddenPath* rule = hiding_rule(kLayout, c.path);
    if (c.origin == nullptr) {
      EXPECT_EQ(rule, nullptr) << rule->origin;
    } else {
      ASSERT_NE(rule, nullptr);
      EXPECT_EQ(rule->origin, c.origin);
    }
  }
  EXPECT_EQ(hiding_rule({}, "/home/u/.ssh/id"), nullptr);
}

TEST(HiddenReads, TheSpellingAloneTellsOnlyAbsoluteNamesUnderAHiddenPath) {
  struct Case {
    const char* spelled;
    const char* resolved;  // nullptr: the spelling cannot tell (resolve the name)
  };
  const Case cases[] = {
      {"/home/u/.ssh/id_ed25519", "/home/u/.ssh/id_ed25519"},
      {"//home/u/./.ssh//id_x", "/home/u/.ssh/id_x"},
      {"/home/u/x/../.ssh/id_x", nullptr},       // x may be a symlink: resolved instead
      {"/home/u/.ssh/..x", "/home/u/.ssh/..x"},  // a name, not ".."
      {"/home/u/.ssh/../.bashrc", nullptr},
      {"/home/u/.ssh/known_hosts", nullptr},
      {".ssh/id_ed25519", nullptr},  // relative: needs the caller's cwd
      {"/etc/passwd", nullptr},
      {"", nullptr},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.spelled);
    const auto hit = read_hit_by_spelling(kLayout, c.spelled);
    if (c.resolved == nullptr) {
      EXPECT_FALSE(hit.has_value());
    } else {
      ASSERT_TRUE(hit.has_value());
      EXPECT_EQ(hit->resolved, c.resolved);
    }
  }
}

}  // namespace
}  // namespace vigil::init
