#include <errno.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "tests/integration/other_user.h"

namespace vigil::test {

namespace {
constexpr std::size_t kMaxRequest = 4096;
}

OtherResult perform_other_op(OtherOp op, const std::vector<std::string>& args) {
  OtherResult r;
  const auto arg = [&](std::size_t i) { return i < args.size() ? args[i].c_str() : ""; };
  int rc = -1;
  switch (op) {
    case OtherOp::kMkdir:
      rc = ::mkdir(arg(0), 0777);
      if (rc == 0) rc = ::chmod(arg(0), 0777);  // whatever the umask
      break;
    case OtherOp::kSymlink:
      rc = ::symlink(arg(0), arg(1));
      break;
    case OtherOp::kUnlink:
      rc = ::unlink(arg(0));
      break;
    case OtherOp::kRmdir:
      rc = ::rmdir(arg(0));
      break;
    case OtherOp::kConnect: {
      UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
      sockaddr_un addr{};
      addr.sun_family = AF_UNIX;
      const std::string path = arg(0);
      if (!fd || path.size() >= sizeof addr.sun_path) {
        r.error = fd ? ENAMETOOLONG : errno;
        return r;
      }
      path.copy(addr.sun_path, path.size());
      rc = ::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr);
      if (rc == 0) r.fd = std::move(fd);
      break;
    }
    case OtherOp::kListen: {
      UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
      sockaddr_un addr{};
      addr.sun_family = AF_UNIX;
      const std::string path = arg(0);
      if (!fd || path.size() >= sizeof addr.sun_path) {
        r.error = fd ? ENAMETOOLONG : errno;
        return r;
      }
      path.copy(addr.sun_path, path.size());
      rc = ::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr);
      if (rc == 0) rc = ::chmod(path.c_str(), 0777);
      if (rc == 0) rc = ::listen(fd.get(), 8);
      if (rc == 0) r.fd = std::move(fd);
      break;
    }
  }
  r.error = rc == 0 ? 0 : errno;
  return r;
}

bool send_other_request(int sock, OtherOp op, const std::vector<std::string>& args) {
  std::string msg(1, static_cast<char>(op));
  for (const auto& a : args) msg += a + '\0';
  if (msg.size() > kMaxRequest) return false;
  return ::send(sock, msg.data(), msg.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(msg.size());
}

bool recv_other_request(int sock, OtherOp* op, std::vector<std::string>* args) {
  char buf[kMaxRequest];
  const ssize_t n = ::recv(sock, buf, sizeof buf, 0);
  if (n < 1 || buf[0] > static_cast<char>(OtherOp::kListen) || buf[0] < 0) return false;
  *op = static_cast<OtherOp>(buf[0]);
  args->clear();
  std::size_t from = 1;
  for (std::size_t i = 1; i < static_cast<std::size_t>(n); ++i) {
    if (buf[i] != '\0') continue;
    args->emplace_back(buf + from, i - from);
    from = i + 1;
  }
  return from == static_cast<std::size_t>(n);  // every argument NUL-terminated
}

bool send_other_reply(int sock, const OtherResult& r) {
  std::int32_t err = r.error;
  iovec iov{&err, sizeof err};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (r.fd) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    const int fd = r.fd.get();
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  }
  return ::sendmsg(sock, &msg, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof err);
}

bool recv_other_reply(int sock, OtherResult* r) {
  std::int32_t err = 0;
  iovec iov{&err, sizeof err};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  if (::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != static_cast<ssize_t>(sizeof err)) return false;
  r->error = err;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
      r->fd.reset(fd);
    }
  }
  return true;
}

}  // namespace vigil::test
