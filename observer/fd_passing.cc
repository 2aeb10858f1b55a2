#include "observer/fd_passing.h"

#include <sys/socket.h>

#include <cstring>

namespace vigil::init {
namespace {

// A one-byte message with room for one fd in its control data.
struct OneFdMessage {
  char byte = 'L';
  iovec iov{};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  OneFdMessage() {
    iov = {&byte, 1};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
  }
};

}  // namespace

bool send_fd(int channel, int fd) {
  OneFdMessage m;
  cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  return ::sendmsg(channel, &m.msg, MSG_NOSIGNAL) == 1;
}

UniqueFd receive_fd(int channel) {
  OneFdMessage m;
  if (::recvmsg(channel, &m.msg, MSG_CMSG_CLOEXEC) != 1) return UniqueFd();
  cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
  if (c == nullptr || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
      c->cmsg_len != CMSG_LEN(sizeof(int))) {
    return UniqueFd();
  }
  int fd = -1;
  std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
  return UniqueFd(fd);
}

}  // namespace vigil::init
