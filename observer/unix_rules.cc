#include "observer/unix_rules.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>

namespace vigil::init {

UnixAddress parse_unix_address(std::string_view bytes) {
  constexpr std::size_t kPathAt = offsetof(sockaddr_un, sun_path);
  // unix_validate_addr(): the family alone (an autobind request) or more than the
  // struct is EINVAL for connect().
  if (bytes.size() <= kPathAt || bytes.size() > sizeof(sockaddr_un)) return {};
  sa_family_t family = 0;
  std::memcpy(&family, bytes.data(), sizeof family);
  if (family != AF_UNIX) return {};
  const std::string_view path = bytes.substr(kPathAt);
  if (path[0] == '\0') return {UnixAddress::Kind::kAbstract, std::string(path.substr(1))};
  return {UnixAddress::Kind::kPath, std::string(path.substr(0, path.find('\0')))};
}

std::string abstract_display(std::string_view name) {
  std::string out = "@";
  for (char c : name) {
    if (c == '\0') {
      out += "\\0";
    } else {
      out += c;
    }
  }
  return out;
}

std::string sock_type_name(int type) {
  switch (type) {
    case SOCK_STREAM:
      return "SOCK_STREAM";
    case SOCK_DGRAM:
      return "SOCK_DGRAM";
    case SOCK_RAW:
      return "SOCK_RAW";
    case SOCK_SEQPACKET:
      return "SOCK_SEQPACKET";
    default:
      return "type " + std::to_string(type);
  }
}

UnixDecision decide_unix(const UnixRequest& r, const std::vector<std::string>& allowed) {
  using V = UnixDecision::Verdict;
  // Another family (IP in the sandbox's own network namespace, netlink): not a path,
  // the namespace decides. vigil-init still performs a trapped connect() itself, on the
  // address it read, so the caller cannot swap in a unix one afterwards.
  if (r.family != AF_UNIX) return {V::kAllow, 0, {}};
  const bool connected_type = r.type == SOCK_STREAM || r.type == SOCK_SEQPACKET;
  if (!connected_type) {
    // A datagram socket reaches any path with sendto()/sendmsg() and no connect() at
    // all: it is refused when made, and one that came in some other way (inherited,
    // received) is not connected for it either.
    return {V::kDeny, r.call == UnixRequest::Call::kSocket ? EPERM : EACCES,
            sock_type_name(r.type) + " can send to any path without connect(); only stream "
                                     "and seqpacket unix sockets are brokered"};
  }
  if (r.call == UnixRequest::Call::kSocket) return {V::kAllow, 0, {}};
  if (r.address == UnixAddress::Kind::kInvalid) return {V::kKernel, EINVAL, {}};
  const bool listed = std::find(allowed.begin(), allowed.end(), r.name) != allowed.end();
  if (listed) return {V::kAllow, 0, {}};
  if (r.address == UnixAddress::Kind::kAbstract)
    return {V::kDeny, EACCES, "an abstract socket not in network.allowUnixSockets (listed as @name)"};
  return {V::kDeny, EACCES, "not in network.allowUnixSockets (exact paths only)"};
}

std::string listed_socket_refusal(const std::vector<std::string>& allowed, const std::string& name) {
  for (const std::string& listed : allowed) {
    if (listed == name)
      return "a listed unix socket (network.allowUnixSockets): only its own service may bind it";
  }
  return {};
}

}  // namespace vigil::init
