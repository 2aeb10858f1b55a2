// write_all: a whole buffer through short writes (a pipe smaller than the data, drained by
// a reader), and a failure that names what was being written.
#include "supervisor/core/base/write_all.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <signal.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <thread>

#include "supervisor/core/base/unique_fd.h"

namespace vigil {
namespace {

TEST(WriteAll, EveryByteThroughShortWrites) {
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  UniqueFd r(p[0]), w(p[1]);
  ::fcntl(w.get(), F_SETPIPE_SZ, 4096);  // many short writes for 1 MiB
  std::string data(1 << 20, '\0');
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7 + 3);
  std::string got;
  std::jthread reader([&] {
    char buf[1000];
    ssize_t n;
    while ((n = ::read(r.get(), buf, sizeof buf)) > 0) got.append(buf, static_cast<size_t>(n));
  });
  const auto ok = write_all(w.get(), data, "the test pipe");
  w.reset();
  reader.join();
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(got, data);
  EXPECT_TRUE(write_all(-1, "", "nothing"));  // nothing to write: no syscall, no error
}

TEST(WriteAll, AFailureNamesWhatWasBeingWritten) {
  const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  UniqueFd ro(fd);
  auto r = write_all(ro.get(), "x", "the session log");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::kSystem);
  EXPECT_EQ(r.error().message.rfind("cannot write the session log", 0), 0u) << r.error().message;
}

// pwrite_all: the same loop at an offset, the file position left where it was.
TEST(WriteAll, AtAnOffsetLeavesThePosition) {
  char name[] = "/tmp/vigil-pwrite-XXXXXX";
  UniqueFd f(::mkstemp(name));
  ASSERT_TRUE(f);
  ::unlink(name);
  ASSERT_TRUE(write_all(f.get(), "0123456789", "the test file"));
  EXPECT_EQ(pwrite_all(f.get(), "ab", 3), 0);
  EXPECT_EQ(::lseek(f.get(), 0, SEEK_CUR), 10);
  char back[11] = {};
  ASSERT_EQ(::pread(f.get(), back, 10, 0), 10);
  EXPECT_STREQ(back, "012ab56789");
  const int ro = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(ro, 0);
  UniqueFd null_ro(ro);
  EXPECT_EQ(pwrite_all(null_ro.get(), "x", 0), EBADF);
}

// write_all_to: a reader that went away is `false`, never a SIGPIPE (at its default
// disposition it would kill this test process).
TEST(WriteAll, AGoneReaderIsFalseNotSigpipe) {
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  UniqueFd r(p[0]), w(p[1]);
  r.reset();
  struct sigaction old {};
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ASSERT_EQ(::sigaction(SIGPIPE, &dfl, &old), 0);
  const bool ok = write_all_to(w.get(), "nobody reads this");
  ::sigaction(SIGPIPE, &old, nullptr);
  EXPECT_FALSE(ok);
}

// The twin is the same pipe with flags of its own: the caller's description stays
// blocking, whole buffers go through, and bytes come out in order.
TEST(WriteAll, ANonBlockingTwinWritesWholeBuffersToTheSamePipe) {
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  UniqueFd r(p[0]), w(p[1]);
  UniqueFd twin = nonblocking_twin(w.get());
  ASSERT_TRUE(twin) << "a pipe's write end can be reopened through /proc/self/fd";
  EXPECT_EQ(::fcntl(w.get(), F_GETFL) & O_NONBLOCK, 0) << "the original keeps its flags";
  EXPECT_NE(::fcntl(twin.get(), F_GETFL) & O_NONBLOCK, 0);
  std::string sent(1 << 20, '\0');
  for (std::size_t i = 0; i < sent.size(); ++i) sent[i] = static_cast<char>('a' + i % 26);
  std::string got;
  std::thread reader([&] {
    char buf[65536];
    ssize_t n;
    while ((n = ::read(r.get(), buf, sizeof buf)) > 0) got.append(buf, static_cast<size_t>(n));
  });
  UniqueFd stop(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  EXPECT_TRUE(write_all_to(twin.get(), sent, stop.get()));
  twin.reset();
  w.reset();
  reader.join();
  EXPECT_EQ(got, sent);
}

// A full destination and a stop: the write gives up (false) instead of spinning on a
// poll the stop keeps waking.
TEST(WriteAll, AFullTwinGivesUpAtTheStop) {
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  UniqueFd r(p[0]), w(p[1]);
  UniqueFd twin = nonblocking_twin(w.get());
  ASSERT_TRUE(twin);
  UniqueFd stop(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  const std::uint64_t one = 1;
  ASSERT_EQ(::write(stop.get(), &one, sizeof one), static_cast<ssize_t>(sizeof one));
  const std::string big(4 << 20, 'x');  // more than any pipe holds
  EXPECT_FALSE(write_all_to(twin.get(), big, stop.get()));
}

// Nothing to gain, or nothing to be had: a regular file, a socket, an fd already
// non-blocking get no twin (write_all_to writes to them as before).
TEST(WriteAll, NoTwinForFilesSocketsOrNonBlockingFds) {
  char path[] = "/tmp/vigil-twin-XXXXXX";
  UniqueFd file(::mkstemp(path));
  ASSERT_TRUE(file);
  ::unlink(path);
  EXPECT_FALSE(nonblocking_twin(file.get()));
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  UniqueFd a(sv[0]), b(sv[1]);
  EXPECT_FALSE(nonblocking_twin(a.get()));
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
  UniqueFd r(p[0]), w(p[1]);
  EXPECT_FALSE(nonblocking_twin(w.get()));
  EXPECT_FALSE(nonblocking_twin(r.get())) << "a read end is not a destination";
}

}  // namespace
}  // namespace vigil
