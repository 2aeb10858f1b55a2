// The listener hand-over: one fd over a socketpair, received close-on-exec; nothing
// received when the sender sent no fd or went away.
#include "observer/fd_passing.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

namespace vigil::init {
namespace {

TEST(FdPassing, TheReceivedFdIsTheSameFileAndCloseOnExec) {
  int sp[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
  UniqueFd a(sp[0]), b(sp[1]);
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  UniqueFd r(p[0]), w(p[1]);
  ASSERT_TRUE(send_fd(a.get(), w.get()));
  UniqueFd got = receive_fd(b.get());
  ASSERT_TRUE(got.valid());
  EXPECT_NE(got.get(), w.get());
  EXPECT_NE(::fcntl(got.get(), F_GETFD) & FD_CLOEXEC, 0);
  ASSERT_EQ(::write(got.get(), "x", 1), 1);
  char c = 0;
  ASSERT_EQ(::read(r.get(), &c, 1), 1);
  EXPECT_EQ(c, 'x');
}

TEST(FdPassing, NothingIsReceivedWithoutAnFd) {
  int sp[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
  UniqueFd a(sp[0]), b(sp[1]);
  ASSERT_EQ(::write(a.get(), "L", 1), 1);  // a byte, no control data
  EXPECT_FALSE(receive_fd(b.get()).valid());
  a.reset();  // the sender is gone
  EXPECT_FALSE(receive_fd(b.get()).valid());
}

}  // namespace
}  // namespace vigil::init
