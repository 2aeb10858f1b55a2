// The backstop's start without a wait (supervisor/backstop/change_clock.h), on this
// machine's real kernel and filesystems: every change made after a floor stamp is stamped
// at or after it and every change made before it below it, in the same clock tick, many
// times over; and the backstop, started from such a stamp with no wait, finds exactly what
// was made after it.
#include "supervisor/backstop/change_clock.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>

#include "supervisor/backstop/backstop.h"
#include "tests/unit/common/scratch_dir.h"

namespace vigil {
namespace {

using Dir = testing_scratch::Scratch;

// Linux 6.13 brought the multigrain floor; before it there is no ChangeClock (and the
// backstop waits for the coarse clock, as its own tests check).
bool kernel_has_floor() {
  utsname u{};
  if (::uname(&u) != 0) return false;
  int major = 0, minor = 0;
  if (std::sscanf(u.release, "%d.%d", &major, &minor) != 2) return false;
  return major > 6 || (major == 6 && minor >= 13);
}

timespec ctime_of(const std::string& path) {
  struct statx sx {};
  EXPECT_EQ(::statx(AT_FDCWD, path.c_str(), AT_SYMLINK_NOFOLLOW, STATX_CTIME, &sx), 0) << path;
  return {static_cast<time_t>(sx.stx_ctime.tv_sec), static_cast<long>(sx.stx_ctime.tv_nsec)};
}

bool at_or_after(const timespec& a, const timespec& b) {
  return a.tv_sec != b.tv_sec ? a.tv_sec > b.tv_sec : a.tv_nsec >= b.tv_nsec;
}

std::string show(const timespec& t) {
  return std::to_string(t.tv_sec) + "." + std::to_string(t.tv_nsec);
}

class ChangeClockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!kernel_has_floor()) GTEST_SKIP() << "Linux before 6.13: no multigrain floor here";
    auto c = ChangeClock::open(dir_.path);
    ASSERT_TRUE(c.ok()) << c.error().message;
    clock_.emplace(std::move(c).value());
  }
  Dir dir_;
  std::optional<ChangeClock> clock_;
};

TEST_F(ChangeClockTest, EveryChangeAfterAStampIsStampedAtOrAfterIt) {
  for (int i = 0; i < 300; ++i) {
    // Made before the stamp and not looked at since (as most files are when a command
    // changes them): its change is stamped coarse, not fine-grained, unless the floor.
    const std::string old_file = dir_ / ("old" + std::to_string(i));
    const std::string made = dir_ / ("made" + std::to_string(i)),
                      sub = dir_ / ("sub" + std::to_string(i));
    std::ofstream(old_file) << "x";
    const auto t = clock_->stamp();
    ASSERT_TRUE(t) << "round " << i;
    // Changes right after the stamp, within the same tick: a mode change of a file that
    // existed, a new file and a new directory.
    ASSERT_EQ(::chmod(old_file.c_str(), 0600), 0);
    std::ofstream(made) << i;
    ASSERT_EQ(::mkdir(sub.c_str(), 0755), 0);
    const timespec changed = ctime_of(old_file);
    EXPECT_TRUE(at_or_after(changed, *t))
        << "round " << i << ": " << show(changed) << " < " << show(*t);
    EXPECT_TRUE(at_or_after(ctime_of(made), *t)) << "round " << i;
    EXPECT_TRUE(at_or_after(ctime_of(sub), *t)) << "round " << i;
  }
}

TEST_F(ChangeClockTest, EveryChangeBeforeAStampIsStampedBelowIt) {
  const std::string f = dir_ / "f", other = dir_ / "other";
  std::ofstream(f) << "x";
  std::ofstream(other) << "x";
  for (int i = 0; i < 300; ++i) {
    // Every other round another task raises the floor first (its file read, then changed
    // twice: the second change is fine-grained), so the host's change below is stamped
    // with the floor itself, the value a stamp taken right after could also get.
    if (i % 2 == 0) {
      for (int k = 0; k < 2; ++k) {
        (void)ctime_of(other);
        ASSERT_EQ(::chmod(other.c_str(), 0600), 0);
      }
    }
    ASSERT_EQ(::chmod(f.c_str(), (i % 4 < 2) ? 0600 : 0644), 0);
    const auto t = clock_->stamp();
    ASSERT_TRUE(t) << "round " << i;
    EXPECT_FALSE(at_or_after(ctime_of(f), *t))
        << "round " << i << ": " << show(ctime_of(f)) << " >= " << show(*t);
  }
}

TEST_F(ChangeClockTest, AStartFromTheClockIsAFloorStampAndWithoutOneTheFineClock) {
  EXPECT_TRUE(change_start(&*clock_).floor);
  timespec before{};
  ::clock_gettime(CLOCK_REALTIME, &before);
  const ChangeStart plain = change_start(nullptr);
  EXPECT_FALSE(plain.floor);
  EXPECT_TRUE(at_or_after(plain.at, before));
}

// The backstop from a floor stamp, with no wait: the host's changes made just before it
// (the same tick) stay the host's, the command's made just after are found.
TEST_F(ChangeClockTest, TheBackstopFromAFloorStampSeparatesTheSameTick) {
  for (int i = 0; i < 50; ++i) {
    Dir t;
    std::filesystem::create_directories(t / "host/.vscode");
    std::ofstream(t / "host/.vscode/tasks.json") << "{}";
    std::ofstream(t / "host/.bashrc") << "alias x=y\n";
    BackstopSnapshot snap = take_backstop_snapshot({});
    const auto stamp = clock_->stamp();
    ASSERT_TRUE(stamp);
    snap.start = {*stamp, true};
    wait_for_coarse_clock(snap);  // returns at once
    std::filesystem::create_directories(t / "cmd/.vscode");
    std::ofstream(t / "cmd/.vscode/tasks.json") << "{}";
    std::ofstream(t / "cmd/.bashrc") << "evil\n";
    BackstopInputs in;
    in.roots = {t.path};
    const auto f = find_offenders(in, snap);
    std::set<std::string> got;
    for (const auto& o : f.offenders) got.insert(o.path.substr(t.path.size() + 1));
    EXPECT_EQ(got, (std::set<std::string>{"cmd/.vscode", "cmd/.bashrc"}))
        << "round " << i << " T " << show(*stamp) << " host/.bashrc "
        << show(ctime_of(t / "host/.bashrc"));
  }
}

}  // namespace
}  // namespace vigil
