// What the backstop learns from a command's records (supervisor/command/command_backstop.h):
// every allowed write counts, one vigil could not name included (it is counted and
// reported, never dropped), and a rename marks its destination.
#include "supervisor/command/command_backstop.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

events::FsWrite allowed(std::string syscall, std::string resolved) {
  events::FsWrite w;
  w.syscall = std::move(syscall);
  w.resolved = std::move(resolved);
  w.verdict = Verdict::kAllowed;
  return w;
}

TEST(WrittenPaths, AWriteWithoutANameIsCountedNotDropped) {
  WrittenPaths p;
  p.note(allowed("openat", "/w/a"));
  p.note(allowed("openat", ""));           // past PATH_MAX: no name vigil-init could tell
  p.note(allowed("mkdirat", "relative"));  // never absolute: not a name on the host
  p.note(allowed("renameat2", "/w/.claude"));
  events::FsWrite refused = allowed("openat", "");
  refused.verdict = Verdict::kDenied;  // changed nothing
  p.note(refused);
  EXPECT_EQ(p.paths, (std::set<std::string>{"/w/a", "/w/.claude"}));
  EXPECT_EQ(p.renamed_into, (std::set<std::string>{"/w/.claude"}));
  EXPECT_EQ(p.unnamed, 2u);
  EXPECT_EQ(p.over_cap, 0u);
}

}  // namespace
}  // namespace vigil
