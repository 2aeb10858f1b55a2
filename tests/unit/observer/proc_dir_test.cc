// vigil-init's /proc paths for a caller: its own namespace's numbers normally; under
// enableWeakerNestedSandbox the container's, read from a pidfd's fdinfo.
#include "observer/proc_dir.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace vigil::init {
namespace {

TEST(ProcDirTest, FdinfoPidLine) {
  EXPECT_EQ(pid_from_fdinfo(
                "pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t1\nPid:\t4242\nNSpid:\t4242\t7\n"),
            4242);
  EXPECT_EQ(pid_from_fdinfo("Pid:\t17\n"), 17);
  EXPECT_EQ(pid_from_fdinfo("Pid:\t-1\n"), -1) << "gone";
  EXPECT_EQ(pid_from_fdinfo("Pid:\t0\n"), -1) << "not in that namespace";
  EXPECT_EQ(pid_from_fdinfo("NSpid:\t5\n"), -1);
  EXPECT_EQ(pid_from_fdinfo("Pid:\t12x\n"), -1);
  EXPECT_EQ(pid_from_fdinfo(""), -1);
}

TEST(ProcDirTest, OwnNamespaceAndTranslated) {
  set_outer_proc(false);
  EXPECT_EQ(proc_dir(123), "/proc/123");
  // Here the test's /proc is its own namespace's: the translation must be the identity.
  set_outer_proc(true);
  EXPECT_EQ(proc_dir(::getpid()), "/proc/" + std::to_string(::getpid()));
  EXPECT_EQ(proc_dir(0x3fffffff), "/proc/0/gone") << "no such process: fails closed";
  set_outer_proc(false);
}

}  // namespace
}  // namespace vigil::init
