// vigil_write_loop: the trapped-write loop that tools/bench/observer_bench.sh times from
// inside the sandbox, so that start-up and the final drain stay out of the figure.
//   vigil_write_loop N PATH   N x { open(PATH, O_WRONLY|O_CREAT); close }
// Prints one line: "<ns per iteration> <N>". Plain libc; the clock is the vDSO's
// CLOCK_MONOTONIC, which no filter traps.
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "supervisor/core/base/unique_fd.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: vigil_write_loop N PATH\n");
    return 2;
  }
  const long n = std::atol(argv[1]);
  if (n <= 0) {
    std::fprintf(stderr, "vigil_write_loop: N must be positive\n");
    return 2;
  }
  timespec a{}, b{};
  ::clock_gettime(CLOCK_MONOTONIC, &a);
  for (long i = 0; i < n; ++i) {
    vigil::UniqueFd fd(::open(argv[2], O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
    if (!fd) {
      std::perror("vigil_write_loop: open");
      return 1;
    }
  }
  ::clock_gettime(CLOCK_MONOTONIC, &b);
  const double ns =
      static_cast<double>(b.tv_sec - a.tv_sec) * 1e9 + static_cast<double>(b.tv_nsec - a.tv_nsec);
  std::printf("%.0f %ld\n", ns / static_cast<double>(n), n);
  return 0;
}
