// The pure half of the unix-socket broker (network.allowUnixSockets): how the kernel reads
// a sockaddr_un, and the decision on one socket() or connect() from the facts vigil-init
// gathered (observer/unix_broker.h does the I/O). No I/O here; table-tested.
//
// The rule: only stream and seqpacket sockets, and only to a listed path, compared
// exactly with the canonical path of the socket the name reaches. Exact, because a socket
// is a service and not a file: a directory or a prefix would grant every service anyone
// later binds beside the listed one (/run/user/1000 holds the session bus, gpg-agent and
// systemd's private socket). Canonical (every symlink and `..` resolved, relative names
// taken from the caller's cwd), so no spelling of a name can make an unlisted socket pass
// for a listed one, and a listed socket is reached however the command spells it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vigil::init {

struct UnixAddress {
  enum class Kind {
    kPath,      // a name in the filesystem: `name` is sun_path up to its first NUL
    kAbstract,  // sun_path[0] == 0: `name` is the rest, NULs and all
    kInvalid,   // what the kernel refuses with EINVAL (length, family)
  };
  Kind kind = Kind::kInvalid;
  std::string name;
};

// The kernel's reading of a connect() address of exactly these bytes (its addrlen):
// more than the family and at most sizeof(sockaddr_un), with sun_family AF_UNIX.
UnixAddress parse_unix_address(std::string_view bytes);

// How an abstract name is shown and listed: "@" then the name, a NUL byte as "\0"
// (settings and the log are text; the kernel's names are bytes).
std::string abstract_display(std::string_view name);

struct UnixRequest {
  enum class Call { kSocket, kConnect };
  Call call = Call::kConnect;
  int family = 0;  // socket(): its domain; connect(): the socket's (SO_DOMAIN)
  int type = 0;    // SOCK_STREAM, SOCK_DGRAM, ... (the low 4 bits)
  UnixAddress::Kind address = UnixAddress::Kind::kPath;  // connect() only
  // connect() to a path: the canonical path of the socket it reaches; to an abstract
  // name: abstract_display() of it.
  std::string name;
};

struct UnixDecision {
  // Not a record's verdict (net.unix carries NetVerdict, core/events/net.h): what
  // vigil-init does with the call, which has a third way, kKernel, a call that is not the
  // sandbox's to judge and gets the kernel's own answer and no record at all.
  enum class Verdict {
    kAllow,   // socket(): continue; connect(): vigil-init connects the caller's socket
    kDeny,    // refused by the sandbox: `error` and a line for the model
    kKernel,  // not the sandbox's to refuse: answer `error` as the kernel would (no line)
  };
  Verdict verdict = Verdict::kDeny;
  int error = 0;
  std::string reason;
};

// `allowed`: network.allowUnixSockets, each path canonical as vigil-init sees it now,
// abstract names as written ("@name").
UnixDecision decide_unix(const UnixRequest& r, const std::vector<std::string>& allowed);

// The gate's word on a bind() that would make the socket file `name` (canonical): a path
// listed in `allowed` is a service the policy trusts, which the command must not stand
// in for by binding its own socket there (a host client would talk to the command). The
// reason it is refused, or "".
std::string listed_socket_refusal(const std::vector<std::string>& allowed, const std::string& name);

// "SOCK_STREAM", "SOCK_DGRAM", ...; "type N" for a number the kernel does not name.
std::string sock_type_name(int type);

}  // namespace vigil::init
