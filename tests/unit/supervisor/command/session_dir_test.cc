// Stale sessions: what a killed vigil leaves behind is swept by the next one, and nothing
// else. Real files, real flocks, in a private temp dir.
#include "supervisor/command/session_dir.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "supervisor/core/base/unique_fd.h"
#include "tests/unit/common/scratch_dir.h"

namespace vigil {
namespace {

using testing_scratch::exists;
using testing_scratch::Scratch;

void touch(const std::string& p, const std::string& content = "") { std::ofstream(p) << content; }

// A session directory as SessionDir::create leaves it: a lock file (held or not) and the
// placeholder manifest.
void make_session(const std::string& dir, const std::vector<std::string>& placeholders) {
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  touch(dir + "/lock");
  std::string text;
  for (const auto& p : placeholders) text += p + '\0';
  std::ofstream(dir + "/placeholders", std::ios::binary) << text;
}

TEST(SessionDirSweep, RemovesAStaleSessionAndItsUntouchedPlaceholders) {
  Scratch base, ws;
  touch(ws / ".bashrc");                                  // what bwrap made: empty, just now
  touch(ws / ".profile", "export X");                     // written since: the user's, kept
  ASSERT_EQ(::mkdir((ws / ".vscode").c_str(), 0700), 0);  // a directory: kept
  ASSERT_EQ(::symlink("/dev/null", (ws / ".zshrc").c_str()), 0);  // a symlink: kept
  make_session(base / "stale", {ws / ".bashrc", ws / ".profile", ws / ".vscode", ws / ".zshrc",
                                "relative/.mcp.json"});
  EXPECT_EQ(sweep_stale_sessions(base.path), 1u);
  EXPECT_FALSE(exists(base / "stale"));
  EXPECT_FALSE(exists(ws / ".bashrc"));
  EXPECT_TRUE(exists(ws / ".profile"));
  EXPECT_TRUE(exists(ws / ".vscode"));
  EXPECT_TRUE(exists(ws / ".zshrc"));
}

TEST(SessionDirSweep, LeavesLiveAndUnlockedDirectoriesAlone) {
  Scratch base, ws;
  touch(ws / ".bashrc");
  make_session(base / "live", {ws / ".bashrc"});
  UniqueFd held(::open((base / "live/lock").c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(held.valid());
  ASSERT_EQ(::flock(held.get(), LOCK_EX), 0);
  // No lock file at all: not a session of this version (or one being created).
  ASSERT_EQ(::mkdir((base / "nolock").c_str(), 0700), 0);
  EXPECT_EQ(sweep_stale_sessions(base.path), 0u);
  EXPECT_TRUE(exists(base / "live"));
  EXPECT_TRUE(exists(base / "nolock"));
  EXPECT_TRUE(exists(ws / ".bashrc")) << "a live session's placeholder was removed";
}

TEST(SessionDirSweep, PlaceholderRemovalNeedsAnEmptyFileFromTheSessionsWindow) {
  Scratch ws, base;
  touch(ws / "a");
  touch(ws / "b");
  const long now = static_cast<long>(std::time(nullptr));
  // Its status changed after the window: touched since the crash, so not ours.
  remove_placeholder_files(base.path, {ws / "a"}, now - 100, now - 50);
  EXPECT_TRUE(exists(ws / "a"));
  // Before the window: older than the session.
  remove_placeholder_files(base.path, {ws / "a"}, now + 50, now + 100);
  EXPECT_TRUE(exists(ws / "a"));
  remove_placeholder_files(base.path, {ws / "a", ws / "b"}, now - 5, now + 5);
  EXPECT_FALSE(exists(ws / "a"));
  EXPECT_FALSE(exists(ws / "b"));
}

TEST(SessionDirSweep, ANewSessionHoldsItsLockAndSweepsStaleOnes) {
  Scratch runtime;
  ASSERT_EQ(::chmod(runtime.path.c_str(), 0700), 0);
  const char* old = std::getenv("XDG_RUNTIME_DIR");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("XDG_RUNTIME_DIR", runtime.path.c_str(), 1);
  ASSERT_EQ(::mkdir((runtime / "vigil").c_str(), 0700), 0);
  make_session(runtime / "vigil/stale", {});
  {
    auto s = SessionDir::create();
    ASSERT_TRUE(s.ok()) << s.error().message;
    EXPECT_FALSE(exists(runtime / "vigil/stale"));
    // Another sweep (a concurrent vigil) leaves this live session alone.
    EXPECT_EQ(sweep_stale_sessions(runtime / "vigil"), 0u);
    EXPECT_TRUE(exists(s->path() + "/lock"));
    EXPECT_TRUE(exists(s->tmp()));
    const std::string path = s->path();
    ASSERT_TRUE(s->record_placeholders({"/nonexistent/.bashrc"}).ok());
    EXPECT_TRUE(exists(path + "/placeholders"));
  }
  if (old != nullptr) {
    ::setenv("XDG_RUNTIME_DIR", saved.c_str(), 1);
  } else {
    ::unsetenv("XDG_RUNTIME_DIR");
  }
}

// A placeholder is removed only while no live session has a writable root containing it
// (session_dir.h): the session that made it leaves it, listed, and a later sweep (the
// next session to finish or to start) removes it once that is so.
TEST(SessionDirSweep, PlaceholdersStayWhileALiveSessionsRootContainsThem) {
  Scratch runtime, ws, elsewhere;
  ASSERT_EQ(::chmod(runtime.path.c_str(), 0700), 0);
  const char* old = std::getenv("XDG_RUNTIME_DIR");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("XDG_RUNTIME_DIR", runtime.path.c_str(), 1);
  {
    auto second = SessionDir::create();
    ASSERT_TRUE(second.ok()) << second.error().message;
    ASSERT_TRUE(second->hold_roots({ws.path}).ok());
    std::string first_dir;
    {
      auto first = SessionDir::create();
      ASSERT_TRUE(first.ok()) << first.error().message;
      ASSERT_TRUE(first->hold_roots({ws.path}).ok());
      first_dir = first->path();
      touch(ws / ".bashrc");  // as bwrap makes it, right after the list is written
      ASSERT_TRUE(first->record_placeholders({ws / ".bashrc"}).ok());
      first->finish({ws / ".bashrc"});
      EXPECT_TRUE(exists(ws / ".bashrc")) << "the second session's root contains it";
    }
    // The list (and the lock, now free) stay for a later sweep; the temp dir does not.
    EXPECT_TRUE(exists(first_dir + "/placeholders"));
    EXPECT_FALSE(exists(first_dir + "/tmp"));
    // A session elsewhere neither removes it nor keeps its own from going.
    {
      auto third = SessionDir::create();
      ASSERT_TRUE(third.ok());
      ASSERT_TRUE(third->hold_roots({elsewhere.path}).ok());
      touch(elsewhere / ".bashrc");
      ASSERT_TRUE(third->record_placeholders({elsewhere / ".bashrc"}).ok());
      third->finish({elsewhere / ".bashrc"});
      EXPECT_FALSE(exists(elsewhere / ".bashrc"));
      EXPECT_TRUE(exists(ws / ".bashrc"));
    }
    second->finish({});
    EXPECT_FALSE(exists(ws / ".bashrc")) << "no live session's root contains it any more";
    EXPECT_FALSE(exists(first_dir));
  }
  if (old != nullptr) {
    ::setenv("XDG_RUNTIME_DIR", saved.c_str(), 1);
  } else {
    ::unsetenv("XDG_RUNTIME_DIR");
  }
}

// A session whose root is an ancestor of the placeholder's directory may have capped it
// too (its scan goes down mandatoryDenySearchDepth levels).
TEST(SessionDirSweep, AnAncestorRootAlsoKeepsAPlaceholder) {
  Scratch runtime, ws;
  ASSERT_EQ(::chmod(runtime.path.c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((ws / "sub").c_str(), 0700), 0);
  const char* old = std::getenv("XDG_RUNTIME_DIR");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("XDG_RUNTIME_DIR", runtime.path.c_str(), 1);
  {
    auto s = SessionDir::create();
    ASSERT_TRUE(s.ok()) << s.error().message;
    ASSERT_TRUE(s->hold_roots({ws.path}).ok());
    touch(ws / "sub/.bashrc");
    EXPECT_EQ(remove_placeholder_files(runtime / "vigil", {ws / "sub/.bashrc"}, 0, LONG_MAX), 1u);
    EXPECT_TRUE(exists(ws / "sub/.bashrc"));
    s->finish({});
    EXPECT_EQ(remove_placeholder_files(runtime / "vigil", {ws / "sub/.bashrc"}, 0, LONG_MAX), 0u);
    EXPECT_FALSE(exists(ws / "sub/.bashrc"));
  }
  if (old != nullptr) {
    ::setenv("XDG_RUNTIME_DIR", saved.c_str(), 1);
  } else {
    ::unsetenv("XDG_RUNTIME_DIR");
  }
}

}  // namespace
}  // namespace vigil
