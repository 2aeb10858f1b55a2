#include "tests/integration/other_user.h"

#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>

#include "tests/integration/harness.h"
#include "tests/support/bounded_wait.h"

namespace vigil::test {

namespace {

constexpr int kActTimeoutMs = 20000;

bool readable_within(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, timeout_ms) == 1;
}

OtherResult failed(int error) {
  OtherResult r;
  r.error = error;
  return r;
}

OtherResult act_through_helper(const std::string& helper, OtherOp op,
                               const std::vector<std::string>& args) {
  UniqueFd sock(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (!sock || helper.size() >= sizeof addr.sun_path) return failed(EINVAL);
  helper.copy(addr.sun_path, helper.size());
  if (::connect(sock.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    return failed(errno);
  if (!send_other_request(sock.get(), op, args)) return failed(EIO);
  OtherResult r;
  if (!readable_within(sock.get(), kActTimeoutMs)) return failed(ETIMEDOUT);
  if (!recv_other_reply(sock.get(), &r)) return failed(EIO);
  return r;
}

OtherResult act_by_setuid(const OtherUser& who, OtherOp op, const std::vector<std::string>& args) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) return failed(errno);
  UniqueFd mine(pair[0]), theirs(pair[1]);
  const pid_t child = ::fork();
  if (child < 0) return failed(errno);
  if (child == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(who.gid) != 0 || ::setuid(who.uid) != 0)
      ::_exit(10);
    ::_exit(send_other_reply(theirs.get(), perform_other_op(op, args)) ? 0 : 11);
  }
  theirs.reset();
  OtherResult r;
  const bool answered =
      readable_within(mine.get(), kActTimeoutMs) && recv_other_reply(mine.get(), &r);
  const int status = wait_child(child, std::chrono::seconds(5));
  if (!answered || status != 0) return failed(answered ? EIO : ETIMEDOUT);
  return r;
}

}  // namespace

OtherUser find_other_user() {
  OtherUser who;
  const char* required = std::getenv("VIGIL_REQUIRE_OTHER_USER");
  who.required = required != nullptr && std::string(required) == "1";
  const char* helper = std::getenv("VIGIL_OTHER_USER_SOCKET");
  if (helper != nullptr && *helper != '\0') {
    // The helper's uid is its socket's owner: it made the socket.
    struct stat st {};
    if (::stat(helper, &st) != 0 || !S_ISSOCK(st.st_mode)) {
      who.why_not = std::string("no helper socket at ") + helper;
    } else if (st.st_uid == ::geteuid()) {
      who.why_not = "the helper runs as this same user";
    } else {
      who.uid = st.st_uid;
      who.gid = st.st_gid;
      who.helper = helper;
    }
    return who;
  }
  if (::geteuid() != 0) {
    who.why_not =
        "acting as a second user needs root, or the helper tools/test.sh starts as root "
        "(VIGIL_OTHER_USER_SOCKET)";
    return who;
  }
  const passwd* pw = ::getpwnam("vigil-ci");
  if (pw == nullptr) {
    who.why_not = "no user vigil-ci to act as (tools/test.sh creates it)";
    return who;
  }
  who.uid = pw->pw_uid;
  who.gid = pw->pw_gid;
  return who;
}

OtherResult act_as(const OtherUser& who, OtherOp op, const std::vector<std::string>& args) {
  return who.helper.empty() ? act_by_setuid(who, op, args)
                            : act_through_helper(who.helper, op, args);
}

}  // namespace vigil::test
