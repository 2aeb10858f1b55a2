// The removal walker on real trees: deeper than PATH_MAX (nftw gave up there with
// ENAMETOOLONG), directories made unreadable, symlinks to outside that must not be
// followed, and the sweep of a stale session holding such a tree.
#include "supervisor/backstop/remove_tree.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <fstream>
#include <string>

#include "supervisor/core/base/unique_fd.h"
#include "tests/unit/common/scratch_dir.h"
#include "supervisor/command/session_dir.h"

namespace vigil {
namespace {

using testing_scratch::exists;
using testing_scratch::Scratch;

// 48-byte names, nested until the path to the bottom is 3x PATH_MAX long; a file and a
// symlink to `outside` at every 50th level, and every 70th directory chmod 000 (made so
// from the bottom up, through descriptors: no path that deep can be named).
void make_deep_tree(const std::string& top, const std::string& outside) {
  const std::string name(48, 'd');
  const std::size_t levels = 3 * PATH_MAX / (name.size() + 1) + 1;
  ASSERT_EQ(::mkdir(top.c_str(), 0700), 0);
  std::vector<UniqueFd> fds;
  fds.emplace_back(::open(top.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  for (std::size_t i = 0; i < levels; ++i) {
    const int here = fds.back().get();
    ASSERT_EQ(::mkdirat(here, name.c_str(), 0700), 0) << "level " << i;
    if (i % 50 == 0) {
      UniqueFd f(::openat(here, "file", O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
      ASSERT_TRUE(f.valid());
      ASSERT_EQ(::symlinkat(outside.c_str(), here, "link"), 0);
    }
    fds.emplace_back(::openat(here, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(fds.back().valid()) << "level " << i;
    // Keep the descriptors bounded: only the last two are needed.
    if (fds.size() > 2) fds.erase(fds.begin());
  }
  // Unreadable directories, from the bottom up: walk down again by descriptor.
  UniqueFd cur(::open(top.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  for (std::size_t i = 0; i < levels; ++i) {
    UniqueFd next(::openat(cur.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(next.valid());
    if (i % 70 == 69) {
      ASSERT_EQ(::fchmod(next.get(), 0), 0);  // still open: we can go on
    }
    cur = std::move(next);
  }
}

TEST(RemoveTree, ATreeThreeTimesDeeperThanPathMaxGoes) {
  Scratch s;
  const std::string outside = s / "outside";
  ASSERT_EQ(::mkdir(outside.c_str(), 0700), 0);
  std::ofstream(outside + "/keep") << "mine";
  make_deep_tree(s / "deep", outside);
  auto r = remove_tree(s / "deep");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(exists(s / "deep"));
  // Links were removed, never followed.
  EXPECT_TRUE(exists(outside + "/keep"));
}

TEST(RemoveTree, UnreadableAndUnwritableDirectoriesAreOpenedUp) {
  Scratch s;
  ASSERT_EQ(::mkdir((s / "t").c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((s / "t/a").c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((s / "t/a/b").c_str(), 0700), 0);
  std::ofstream(s / "t/a/b/f") << "x";
  std::ofstream(s / "t/a/g") << "x";
  ASSERT_EQ(::chmod((s / "t/a/b").c_str(), 0), 0);
  ASSERT_EQ(::chmod((s / "t/a").c_str(), 0500), 0);
  ASSERT_EQ(::chmod((s / "t").c_str(), 0), 0);
  auto r = remove_tree(s / "t");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(exists(s / "t"));
}

TEST(RemoveTree, ASymlinkOrFileAtTheTopIsRemovedItselfAndAMissingPathIsFine) {
  Scratch s;
  ASSERT_EQ(::mkdir((s / "target").c_str(), 0700), 0);
  std::ofstream(s / "target/keep") << "x";
  ASSERT_EQ(::symlink((s / "target").c_str(), (s / "link").c_str()), 0);
  ASSERT_TRUE(remove_tree(s / "link").ok());
  EXPECT_FALSE(exists(s / "link"));
  EXPECT_TRUE(exists(s / "target/keep"));
  EXPECT_TRUE(remove_tree(s / "missing").ok());
}

TEST(RemoveTree, TheSweepRemovesAStaleSessionHoldingADeepTree) {
  Scratch base;
  const std::string outside = base / "outside";
  ASSERT_EQ(::mkdir(outside.c_str(), 0700), 0);
  const std::string dir = base / "stale";
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  std::ofstream(dir + "/lock");  // nobody holds it: a killed session's
  make_deep_tree(dir + "/tmp", outside);
  EXPECT_EQ(sweep_stale_sessions(base.path), 1u);
  EXPECT_FALSE(exists(dir));
  EXPECT_TRUE(exists(outside));
}

}  // namespace
}  // namespace vigil
