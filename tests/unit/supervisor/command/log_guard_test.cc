// log_guard(): what of the session log a sandbox must not write, one rule for Linux (a
// read-only bind) and macOS (a Seatbelt deny). A table over where the log can be.
#include "supervisor/command/log_guard.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

PathRule root(const std::string& path) {
  PathRule r;
  r.written = r.literal = r.resolved = path;
  r.origin = "filesystem.allowWrite";
  r.kind = PathKind::kDir;
  return r;
}

TEST(LogGuard, WhereTheLogIsDecidesWhatIsProtected) {
  Policy policy;
  policy.cwd = "/home/u/proj";
  policy.home = "/home/u";
  policy.fs.allow_write = {root("/home/u/proj"), root("/tmp/vigil-1/s/tmp")};
  PathRule denied = root("/home/u/proj/secret");
  denied.origin = "filesystem.denyWrite[0]";
  policy.fs.deny_write = {denied};
  const Plan plan = build_plan(policy, {});
  struct Case {
    const char* log_file;
    std::optional<LogGuard> want;
    const char* why;
  };
  const Case cases[] = {
      {"/home/u/.local/state/vigil/sessions/a.jsonl", std::nullopt,
       "the default state dir: outside every writable root, unwritable already"},
      {"/home/u/proj/logs/a.jsonl", LogGuard{"/home/u/proj/logs", true},
       "a directory inside the workspace: the directory, earlier logs too"},
      {"/home/u/proj/logs/deep/a.jsonl", LogGuard{"/home/u/proj/logs/deep", true},
       "deeper: still its own directory"},
      {"/home/u/proj/a.jsonl", LogGuard{"/home/u/proj/a.jsonl", false},
       "the workspace root itself: the file alone (the root stays writable)"},
      {"/home/u/a.jsonl", std::nullopt,
       "home, above the root: unwritable already (only the root is writable)"},
      {"/tmp/vigil-1/s/tmp/a.jsonl", LogGuard{"/tmp/vigil-1/s/tmp/a.jsonl", false},
       "the session temp dir, itself a root"},
      {"/home/u/proj/secret/a.jsonl", std::nullopt, "under a denyWrite: unwritable already"},
  };
  for (const auto& c : cases) {
    const auto got = log_guard(plan, policy.fs.allow_write, c.log_file);
    ASSERT_EQ(got.has_value(), c.want.has_value()) << c.why;
    if (!got) continue;
    EXPECT_EQ(got->path, c.want->path) << c.why;
    EXPECT_EQ(got->is_dir, c.want->is_dir) << c.why;
    // The rule either platform adds: with it in the policy, the log cannot be written.
    Policy guarded = policy;
    guarded.fs.deny_write.push_back(log_guard_rule(*got));
    const Plan after = build_plan(guarded, {});
    EXPECT_EQ(decide(after, c.log_file, Access::kWrite).verdict, Verdict::kDenied) << c.why;
    // A guarded directory is unwritable now: asking again adds nothing.
    if (got->is_dir) {
      EXPECT_FALSE(log_guard(after, guarded.fs.allow_write, c.log_file)) << c.why;
    }
    EXPECT_EQ(decide(after, "/home/u/proj/src/a.c", Access::kWrite).verdict, Verdict::kAllowed)
        << c.why;
  }
}

}  // namespace
}  // namespace vigil
