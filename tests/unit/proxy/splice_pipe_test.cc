// The splice relay's pieces on real descriptors: the pool's pipes (CLOEXEC, non-blocking,
// reused only when empty, bounded, closed by clear()) and each outcome of one splice(2)
// call between a socketpair and a pipe.
#include "proxy/splice_pipe.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace vigil::proxy {
namespace {

bool fd_open(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

TEST(PipePool, PipesAreCloexecNonBlockingAndReused) {
  if (!splice_available()) GTEST_SKIP() << "splice(2) is Linux only";
  PipePool pool;
  auto p = pool.take();
  ASSERT_TRUE(p.ok()) << p.error().message;
  for (int fd : {p->read.get(), p->write.get()}) {
    EXPECT_NE(::fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
    EXPECT_NE(::fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
  }
  const int read_fd = p->read.get();
  pool.give(std::move(*p));
  EXPECT_EQ(pool.kept(), 1u);
  auto again = pool.take();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->read.get(), read_fd) << "an empty pipe is handed out again";
  EXPECT_EQ(pool.kept(), 0u);
}

TEST(PipePool, KeepsAtMostItsBoundAndClearCloses) {
  if (!splice_available()) GTEST_SKIP() << "splice(2) is Linux only";
  PipePool pool;
  std::vector<SplicePipe> pipes;
  for (std::size_t i = 0; i < PipePool::kKeep + 3; ++i) {
    auto p = pool.take();
    ASSERT_TRUE(p.ok());
    pipes.push_back(std::move(*p));
  }
  std::vector<int> fds;
  for (auto& p : pipes) fds.push_back(p.read.get());
  for (auto& p : pipes) pool.give(std::move(p));
  EXPECT_EQ(pool.kept(), PipePool::kKeep);
  // The ones beyond the bound were closed at once.
  EXPECT_FALSE(fd_open(fds.back()));
  pool.trim(1);
  EXPECT_EQ(pool.kept(), 1u);
  EXPECT_TRUE(fd_open(fds.front())) << "trim keeps the oldest kept pipe";
  EXPECT_FALSE(fd_open(fds[1]));
  pool.clear();
  EXPECT_EQ(pool.kept(), 0u);
  EXPECT_FALSE(fd_open(fds.front()));
}

TEST(SpliceStep, EachOutcome) {
  if (!splice_available()) GTEST_SKIP() << "splice(2) is Linux only";
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
  UniqueFd a(sv[0]), b(sv[1]);
  PipePool pool;
  auto p = pool.take();
  ASSERT_TRUE(p.ok());
  // Nothing to read yet.
  EXPECT_EQ(splice_step(b.get(), p->write.get(), 1 << 20).kind, SpliceStep::Kind::kWouldBlock);
  ASSERT_EQ(::write(a.get(), "hello", 5), 5);
  SpliceStep in = splice_step(b.get(), p->write.get(), 1 << 20);
  ASSERT_EQ(in.kind, SpliceStep::Kind::kMoved);
  EXPECT_EQ(in.bytes, 5u);
  // Out of the pipe into the socket, and it arrives unchanged on the other end.
  SpliceStep out = splice_step(p->read.get(), b.get(), in.bytes);
  ASSERT_EQ(out.kind, SpliceStep::Kind::kMoved);
  char buf[8] = {};
  ASSERT_EQ(::read(a.get(), buf, sizeof buf), 5);
  EXPECT_EQ(std::string(buf, 5), "hello");
  // The peer half-closes: end of stream.
  ASSERT_EQ(::shutdown(a.get(), SHUT_WR), 0);
  EXPECT_EQ(splice_step(b.get(), p->write.get(), 1 << 20).kind, SpliceStep::Kind::kEnd);
  // A descriptor that is not open: an error with its errno.
  const SpliceStep bad = splice_step(-1, p->write.get(), 1);
  EXPECT_EQ(bad.kind, SpliceStep::Kind::kError);
  EXPECT_EQ(bad.error, EBADF);
}

}  // namespace
}  // namespace vigil::proxy
