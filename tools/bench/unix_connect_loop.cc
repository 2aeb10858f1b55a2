// vigil_unix_connect_loop: the connect() loop tools/bench/unix_connect_bench.sh times from
// inside the sandbox, so that start-up and the final drain stay out of the figure.
//   vigil_unix_connect_loop N PATH block|nonblock|tcp
// Listens at PATH (a unix stream socket; tcp: 127.0.0.1, an ephemeral port), accepts on a
// thread, then N x { socket; connect; close } with a blocking or a non-blocking socket.
// Prints one line: "<ns per iteration> <N>". The clock is the vDSO's CLOCK_MONOTONIC.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "supervisor/core/base/unique_fd.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: vigil_unix_connect_loop N PATH block|nonblock|tcp\n");
    return 2;
  }
  const long n = std::atol(argv[1]);
  const std::string mode = argv[3];
  if (n <= 0 || (mode != "block" && mode != "nonblock" && mode != "tcp")) {
    std::fprintf(stderr, "vigil_unix_connect_loop: N must be positive, mode block|nonblock|tcp\n");
    return 2;
  }
  const bool tcp = mode == "tcp";
  sockaddr_storage to{};
  socklen_t to_len = 0;
  vigil::UniqueFd listener(::socket(tcp ? AF_INET : AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (tcp) {
    auto* in = reinterpret_cast<sockaddr_in*>(&to);
    in->sin_family = AF_INET;
    in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    to_len = sizeof *in;
  } else {
    auto* un = reinterpret_cast<sockaddr_un*>(&to);
    un->sun_family = AF_UNIX;
    std::snprintf(un->sun_path, sizeof un->sun_path, "%s", argv[2]);
    to_len = sizeof *un;
    ::unlink(argv[2]);
  }
  if (!listener || ::bind(listener.get(), reinterpret_cast<sockaddr*>(&to), to_len) != 0 ||
      ::listen(listener.get(), 4096) != 0 ||
      ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&to), &to_len) != 0) {
    std::perror("vigil_unix_connect_loop: listen");
    return 1;
  }
  std::thread([fd = listener.get(), n] {
    for (long i = 0; i < n; ++i) vigil::UniqueFd c(::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC));
  }).detach();
  const int type = SOCK_STREAM | SOCK_CLOEXEC | (mode == "nonblock" ? SOCK_NONBLOCK : 0);
  timespec a{}, b{};
  ::clock_gettime(CLOCK_MONOTONIC, &a);
  for (long i = 0; i < n; ++i) {
    vigil::UniqueFd fd(::socket(tcp ? AF_INET : AF_UNIX, type, 0));
    if (!fd || ::connect(fd.get(), reinterpret_cast<sockaddr*>(&to), to_len) != 0) {
      std::perror("vigil_unix_connect_loop: connect");
      return 1;
    }
  }
  ::clock_gettime(CLOCK_MONOTONIC, &b);
  const double ns =
      static_cast<double>(b.tv_sec - a.tv_sec) * 1e9 + static_cast<double>(b.tv_nsec - a.tv_nsec);
  std::printf("%.0f %ld\n", ns / static_cast<double>(n), n);
  std::fflush(stdout);
  std::_Exit(0);  // the accept thread may still wait for connections that were refused
}
