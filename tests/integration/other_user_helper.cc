// vigil_other_user SOCKET CLIENT_UID: the second user of the unprivileged test pass.
// tools/test.sh, as root, starts it as the user vigil-ci-other (setpriv, no setuid bit)
// before the pass drops to vigil-ci, and kills it by PID afterwards. It serves one act
// per connection (tests/integration/other_user.h) to CLIENT_UID only, with its own
// credentials: it holds no privilege, so it can do nothing vigil-ci-other could not.
#include <errno.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/integration/other_user.h"

int main(int argc, char** argv) {
  using namespace vigil::test;
  if (argc != 3) {
    std::fprintf(stderr, "usage: vigil_other_user SOCKET CLIENT_UID\n");
    return 2;
  }
  const std::string path = argv[1];
  const uid_t client = static_cast<uid_t>(std::strtoul(argv[2], nullptr, 10));
  vigil::UniqueFd listener(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (!listener || path.size() >= sizeof addr.sun_path) return 1;
  path.copy(addr.sun_path, path.size());
  ::unlink(path.c_str());
  if (::bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::chmod(path.c_str(), 0666) != 0 || ::listen(listener.get(), 8) != 0) {
    std::perror("vigil_other_user: listen");
    return 1;
  }
  for (;;) {
    vigil::UniqueFd conn(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!conn) {
      if (errno == EINTR) continue;
      return 1;
    }
    ucred peer{};
    socklen_t len = sizeof peer;
    if (::getsockopt(conn.get(), SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0 || peer.uid != client)
      continue;                     // only the test pass's user may ask
    const timeval patience{20, 0};  // a client that sends nothing cannot stall the helper
    (void)::setsockopt(conn.get(), SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
    OtherOp op{};
    std::vector<std::string> args;
    if (recv_other_request(conn.get(), &op, &args))
      (void)send_other_reply(conn.get(), perform_other_op(op, args));
  }
}
