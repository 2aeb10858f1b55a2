#include "observer/command_handoff.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "supervisor/core/base/write_all.h"

namespace vigil::init {
namespace {

constexpr std::uint32_t kMagic = 0x56434d44;  // "VCMD"

struct Header {
  std::uint32_t magic = kMagic;
  std::uint32_t mask = 0;  // bit i: descriptor i comes with this header
  std::uint64_t length = 0;
};

}  // namespace

std::string encode_handoff_payload(const HandedCommand& cmd) {
  std::string out = std::to_string(cmd.argv.size());
  out.push_back('\0');
  for (const auto& a : cmd.argv) {
    out += a;
    out.push_back('\0');
  }
  for (const auto& e : cmd.env) {
    out += e;
    out.push_back('\0');
  }
  return out;
}

Result<HandedCommand> decode_handoff_payload(std::string_view payload) {
  std::vector<std::string_view> entries;
  while (!payload.empty()) {
    const auto nul = payload.find('\0');
    if (nul == std::string_view::npos)
      return make_error(Errc::kInvalidPolicy, "the handed command's last entry has no NUL");
    entries.push_back(payload.substr(0, nul));
    payload.remove_prefix(nul + 1);
  }
  std::size_t argc = 0;
  if (entries.empty()) return make_error(Errc::kInvalidPolicy, "the handed command is empty");
  const auto count = entries[0];
  const auto [end, ec] = std::from_chars(count.data(), count.data() + count.size(), argc);
  if (ec != std::errc() || end != count.data() + count.size() || argc == 0 ||
      argc > entries.size() - 1) {
    return make_error(Errc::kInvalidPolicy, "the handed command's argument count is wrong");
  }
  HandedCommand cmd;
  for (std::size_t i = 1; i <= argc; ++i) cmd.argv.emplace_back(entries[i]);
  for (std::size_t i = argc + 1; i < entries.size(); ++i) {
    if (entries[i].find('=') == std::string_view::npos)
      return make_error(Errc::kInvalidPolicy, "a handed environment entry has no '='");
    cmd.env.emplace_back(entries[i]);
  }
  return cmd;
}

Result<void> send_handed_command(int channel, const HandedCommand& cmd,
                                 const std::array<int, 3>& stdio) {
  const std::string payload = encode_handoff_payload(cmd);
  Header h;
  h.length = payload.size();
  int fds[3];
  std::size_t n = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    if (stdio[i] < 0) continue;
    h.mask |= 1U << i;
    fds[n++] = stdio[i];
  }
  iovec iov{&h, sizeof h};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof fds)] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (n > 0) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(n * sizeof(int));
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(n * sizeof(int));
    std::memcpy(CMSG_DATA(c), fds, n * sizeof(int));
  }
  ssize_t sent;
  do {
    sent = ::sendmsg(channel, &msg, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  if (sent != static_cast<ssize_t>(sizeof h)) return system_error("handing the command to its sandbox");
  return write_all(channel, payload, "the handed command");
}

Result<ReceivedCommand> receive_handed_command(int channel) {
  Header h{};
  h.magic = 0;
  iovec iov{&h, sizeof h};
  alignas(cmsghdr) char control[CMSG_SPACE(3 * sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t got;
  do {
    got = ::recvmsg(channel, &msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);
  } while (got < 0 && errno == EINTR);
  ReceivedCommand out;
  // The descriptors first: owned (and closed) whatever is wrong with the rest.
  std::vector<UniqueFd> fds;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < n; ++i) {
      int fd = -1;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      fds.emplace_back(fd);
    }
  }
  if (got == 0) return make_error(Errc::kNotFound, "no command came (the spare was discarded)");
  if (got != static_cast<ssize_t>(sizeof h)) return system_error("receiving the command");
  if (h.magic != kMagic || h.mask > 7 || h.length > kMaxHandoffPayload ||
      (msg.msg_flags & MSG_CTRUNC) != 0 ||
      fds.size() != static_cast<std::size_t>(__builtin_popcount(h.mask))) {
    return make_error(Errc::kInvalidPolicy, "a malformed command hand-off");
  }
  std::size_t next = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    if ((h.mask & (1U << i)) != 0) out.stdio[i] = std::move(fds[next++]);
  }
  std::string payload(h.length, '\0');
  std::size_t have = 0;
  while (have < payload.size()) {
    const ssize_t r = ::read(channel, payload.data() + have, payload.size() - have);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return make_error(Errc::kInvalidPolicy, "the handed command was cut short");
    have += static_cast<std::size_t>(r);
  }
  auto cmd = decode_handoff_payload(payload);
  VIGIL_TRY(cmd);
  out.cmd = std::move(cmd).value();
  return out;
}

}  // namespace vigil::init
