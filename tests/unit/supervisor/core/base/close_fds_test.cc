// close_fds_from / close_fds_from_except, in forked children (they close this process's
// descriptors): exactly the kept ones survive, wherever they sit in the range.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <string>
#include <vector>

#include "supervisor/core/base/unique_fd.h"
#include "tests/support/bounded_wait.h"

namespace vigil {
namespace {

// In a child: /dev/null on fds 10..19, the report pipe on fd 5; runs `close_some`, then
// reports which of 10..19 are still open as ten characters ('1' open, '0' closed).
std::string open_after(const std::function<void()>& close_some) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return "pipe failed";
  UniqueFd r(p[0]), w(p[1]);
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::dup2(w.get(), 5) != 5) ::_exit(2);
    for (int fd = 10; fd < 20; ++fd) {
      if (::dup2(5, fd) != fd) ::_exit(2);  // any open description will do
    }
    close_some();
    char report[10];
    for (int fd = 10; fd < 20; ++fd) report[fd - 10] = ::fcntl(fd, F_GETFD) >= 0 ? '1' : '0';
    const bool std_open = ::fcntl(0, F_GETFD) >= 0 && ::fcntl(2, F_GETFD) >= 0;
    ::_exit(::write(5, report, sizeof report) == sizeof report && std_open ? 0 : 3);
  }
  w.reset();
  bool late = false;
  const std::string got = test::read_until_eof(r.get(), std::chrono::seconds(30), &late);
  if (late || test::wait_child(pid, std::chrono::seconds(30)) != 0) return "child failed or hung";
  return got;
}

TEST(CloseFds, FromClosesTheWholeRange) {
  EXPECT_EQ(open_after([] { close_fds_from(10); }), "0000000000");
  EXPECT_EQ(open_after([] { close_fds_from(15); }), "1111100000");
}

TEST(CloseFdsExcept, KeepsExactlyTheListedOnes) {
  struct Case {
    std::vector<int> keep;
    const char* open;
  };
  const Case cases[] = {
      {{}, "0000000000"},
      {{12}, "0010000000"},
      {{10}, "1000000000"},                              // at the start of the range
      {{19}, "0000000001"},                              // at its end
      {{17, 12}, "0010000100"},                          // any order
      {{12, 12, 13}, "0011000000"},                      // repeated
      {{-1, 3, 14}, "0000100000"},                       // negative and below `first`: ignored
      {{10, 11, 12, 13}, "1111000000"},                  // adjacent
      {{11, 13, 15, 17, 19, 10, 12, 14}, "1111110101"},  // kMaxKept of them
  };
  for (const auto& c : cases) {
    const std::vector<int> keep = c.keep;
    EXPECT_EQ(open_after([keep] { close_fds_from_except(10, keep); }), c.open)
        << "keeping " << ::testing::PrintToString(keep);
  }
  // More than it can hold without allocating: everything from `first` goes (the safe side).
  const std::vector<int> nine = {10, 11, 12, 13, 14, 15, 16, 17, 18};
  EXPECT_EQ(open_after([nine] { close_fds_from_except(10, nine); }), "0000000000");
}

}  // namespace
}  // namespace vigil
