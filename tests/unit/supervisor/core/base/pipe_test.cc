// The one pipe type (supervisor/core/base/pipe.h): close-on-exec by default, the flags
// asked for on both ends, bytes through.
#include "supervisor/core/base/pipe.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace vigil {
namespace {

TEST(Pipe, IsCloseOnExecAndBlockingByDefault) {
  auto p = make_pipe();
  ASSERT_TRUE(p.ok()) << p.error().message;
  for (const int fd : {p->read.get(), p->write.get()}) {
    EXPECT_NE(::fcntl(fd, F_GETFD) & FD_CLOEXEC, 0) << fd;
    EXPECT_EQ(::fcntl(fd, F_GETFL) & O_NONBLOCK, 0) << fd;
  }
  ASSERT_EQ(::write(p->write.get(), "ab", 2), 2);
  char buf[2];
  ASSERT_EQ(::read(p->read.get(), buf, 2), 2);
  EXPECT_EQ(std::string(buf, 2), "ab");
}

TEST(Pipe, SetsTheFlagsAskedForOnBothEnds) {
  auto p = make_pipe(O_CLOEXEC | O_NONBLOCK);
  ASSERT_TRUE(p.ok()) << p.error().message;
  for (const int fd : {p->read.get(), p->write.get()})
    EXPECT_NE(::fcntl(fd, F_GETFL) & O_NONBLOCK, 0) << fd;
  char c;
  EXPECT_EQ(::read(p->read.get(), &c, 1), -1);  // empty and non-blocking: EAGAIN, not a hang
  EXPECT_EQ(errno, EAGAIN);

  auto inherited = make_pipe(0);
  ASSERT_TRUE(inherited.ok());
  EXPECT_EQ(::fcntl(inherited->read.get(), F_GETFD) & FD_CLOEXEC, 0);
}

}  // namespace
}  // namespace vigil
