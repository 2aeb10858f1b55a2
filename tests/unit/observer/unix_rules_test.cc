// The unix-socket broker's decision as a table: (call, family, type, address, name) ->
// verdict, errno, reason; and the kernel's reading of a sockaddr_un, byte for byte.
#include "observer/unix_rules.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

namespace vigil::init {
namespace {

using V = UnixDecision::Verdict;
using K = UnixAddress::Kind;
using C = UnixRequest::Call;

std::string sockaddr_bytes(std::string_view path, std::size_t extra = 0, sa_family_t family = AF_UNIX) {
  std::string out(sizeof(sa_family_t), '\0');
  std::memcpy(out.data(), &family, sizeof family);
  out += path;
  out.append(extra, '\0');
  return out;
}

TEST(UnixAddress, ReadLikeTheKernel) {
  struct Row {
    std::string bytes;
    K kind;
    std::string name;
  };
  const std::vector<Row> rows = {
      {sockaddr_bytes("/run/x.sock", 1), K::kPath, "/run/x.sock"},
      {sockaddr_bytes("/run/x.sock"), K::kPath, "/run/x.sock"},  // no NUL: the length ends it
      {sockaddr_bytes("rel.sock", 1), K::kPath, "rel.sock"},
      {sockaddr_bytes(std::string("/a\0/b", 5), 1), K::kPath, "/a"},  // first NUL ends a path
      {sockaddr_bytes(std::string("\0name", 5)), K::kAbstract, "name"},
      {sockaddr_bytes(std::string("\0a\0b", 4)), K::kAbstract, std::string("a\0b", 3)},
      {sockaddr_bytes(""), K::kInvalid, ""},                   // the family alone: autobind
      {sockaddr_bytes("", 0).substr(0, 1), K::kInvalid, ""},  // shorter than the family
      {sockaddr_bytes("/x", 1, AF_INET), K::kInvalid, ""},     // another family
      {sockaddr_bytes(std::string(sizeof(sockaddr_un{}.sun_path), 'a')), K::kPath,
       std::string(sizeof(sockaddr_un{}.sun_path), 'a')},  // exactly the struct
      {sockaddr_bytes(std::string(sizeof(sockaddr_un{}.sun_path) + 1, 'a')), K::kInvalid, ""},
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE("row " + std::to_string(i));
    const UnixAddress a = parse_unix_address(rows[i].bytes);
    EXPECT_EQ(a.kind, rows[i].kind);
    EXPECT_EQ(a.name, rows[i].name);
  }
  EXPECT_EQ(abstract_display(std::string("a\0b", 3)), "@a\\0b");
}

TEST(UnixDecision, Table) {
  const std::vector<std::string> allowed = {"/run/docker.sock", "/tmp/agent.sock", "@listed"};
  struct Row {
    C call;
    int family, type;
    K address;
    std::string name;
    V verdict;
    int error;
    std::string reason_has;
  };
  const std::vector<Row> rows = {
      // socket(): stream and seqpacket are made freely; datagram (and raw, which AF_UNIX
      // makes datagram) refused with a line.
      {C::kSocket, AF_UNIX, SOCK_STREAM, K::kPath, "", V::kAllow, 0, ""},
      {C::kSocket, AF_UNIX, SOCK_SEQPACKET, K::kPath, "", V::kAllow, 0, ""},
      {C::kSocket, AF_UNIX, SOCK_DGRAM, K::kPath, "", V::kDeny, EPERM, "SOCK_DGRAM can send"},
      {C::kSocket, AF_UNIX, SOCK_RAW, K::kPath, "", V::kDeny, EPERM, "SOCK_RAW"},
      {C::kSocket, AF_INET, SOCK_DGRAM, K::kPath, "", V::kAllow, 0, ""},
      // connect() to a path: exact canonical match only.
      {C::kConnect, AF_UNIX, SOCK_STREAM, K::kPath, "/run/docker.sock", V::kAllow, 0, ""},
      {C::kConnect, AF_UNIX, SOCK_SEQPACKET, K::kPath, "/tmp/agent.sock", V::kAllow, 0, ""},
      {C::kConnect, AF_UNIX, SOCK_STREAM, K::kPath, "/run/other.sock", V::kDeny, EACCES,
       "not in network.allowUnixSockets (exact paths only)"},
      // A directory or a prefix of a listed path is not the path.
      {C::kConnect, AF_UNIX, SOCK_STREAM, K::kPath, "/run", V::kDeny, EACCES, "exact"},
      {C::kConnect, AF_UNIX, SOCK_STREAM, K::kPath, "/run/docker.sock.evil", V::kDeny, EACCES, "exact"},
      {C::kConnect, AF_UNIX, SOCK_STREAM, K::kPath, "/run/docker.sock/", V::kDeny, EACCES, "exact"},
      // A datagram socket that reached connect() (inherited, received): not connected.
      {C::kConnect, AF_UNIX, SOCK_DGRAM, K::kPath, "/run/docker.sock", V::kDeny, EACCES, "SOCK_DGRAM"},
      // Abstract names: refused unless listed as @name.
      {C::kConnect, AF_UNIX, SOCK_STREAM, K::kAbstract, "@listed", V::kAllow, 0, ""},
      {C::kConnect, AF_UNIX, SOCK_STREAM, K::kAbstract, "@other", V::kDeny, EACCES, "abstract"},
      // A path that spells a listed abstract name is a different socket.
      {C::kConnect, AF_UNIX, SOCK_STREAM, K::kPath, "@listed", V::kAllow, 0, ""},
      // What the kernel refuses itself: its own answer, no line.
      {C::kConnect, AF_UNIX, SOCK_STREAM, K::kInvalid, "", V::kKernel, EINVAL, ""},
      // Other families: the sandbox's network namespace decides.
      {C::kConnect, AF_INET, SOCK_STREAM, K::kInvalid, "", V::kAllow, 0, ""},
      {C::kConnect, AF_INET6, SOCK_DGRAM, K::kInvalid, "", V::kAllow, 0, ""},
      {C::kConnect, AF_NETLINK, SOCK_RAW, K::kInvalid, "", V::kAllow, 0, ""},
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    SCOPED_TRACE("row " + std::to_string(i) + ": " + r.name);
    const UnixDecision d = decide_unix({r.call, r.family, r.type, r.address, r.name}, allowed);
    EXPECT_EQ(d.verdict, r.verdict);
    EXPECT_EQ(d.error, r.error);
    if (r.reason_has.empty()) {
      EXPECT_TRUE(d.verdict != V::kDeny) << "a refusal must say why";
    } else {
      EXPECT_NE(d.reason.find(r.reason_has), std::string::npos) << d.reason;
    }
  }
  // An empty list refuses every path.
  EXPECT_EQ(decide_unix({C::kConnect, AF_UNIX, SOCK_STREAM, K::kPath, "/run/docker.sock"}, {}).verdict,
            V::kDeny);
}

// A bind() onto a listed path would stand in for the service the policy trusts: refused;
// any other name is the mount table's and the gate's other rules' to judge.
TEST(UnixRules, ABindOntoAListedSocketIsRefused) {
  const std::vector<std::string> listed = {"/run/svc.sock"};
  EXPECT_NE(listed_socket_refusal(listed, "/run/svc.sock").find("allowUnixSockets"), std::string::npos);
  EXPECT_EQ(listed_socket_refusal(listed, "/run/svc.sock2"), "");
  EXPECT_EQ(listed_socket_refusal({}, "/run/svc.sock"), "");
}

}  // namespace
}  // namespace vigil::init
