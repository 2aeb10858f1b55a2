// write_all: a whole buffer through short writes (a pipe smaller than the data, drained by
// a reader), and a failure that names what was being written.
#include "supervisor/core/base/write_all.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

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

}  // namespace
}  // namespace vigil
