// A second local user for the tests that show one user cannot reach another's session
// or plant names in its way. The guarantee matters most for an unprivileged owner, so
// it is tested in both passes of tools/test.sh without a skip:
//   - as root, the test forks and drops to the user vigil-ci to act;
//   - as vigil-ci (unprivileged, so it cannot become anyone), it asks a helper that the
//     root part of tools/test.sh started as a third user, vigil-ci-other, before dropping
//     (tests/integration/other_user_helper.cc, socket in $VIGIL_OTHER_USER_SOCKET). The
//     helper acts with its own credentials only: no setuid bit, no privilege.
// Either way the act really happens under another uid (the kernel's SO_PEERCRED and
// file owners show it), and an open socket comes back to the test by SCM_RIGHTS.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "supervisor/core/base/unique_fd.h"

namespace vigil::test {

// One act of the other user: its name, then its path arguments.
enum class OtherOp { kMkdir, kSymlink, kUnlink, kRmdir, kConnect, kListen };

struct OtherResult {
  int error = 0;  // errno of the act, 0 when it succeeded
  UniqueFd fd;    // kConnect: the connected AF_UNIX stream socket; kListen: the listening one
};

// Performs `op` with this process's own credentials (the helper and the forked child
// call it). kMkdir makes a 0777 directory; kSymlink(target, path); kConnect(path);
// kListen(path): binds a stream socket there (0777) and listens (SO_PEERCRED: this user).
OtherResult perform_other_op(OtherOp op, const std::vector<std::string>& args);

// (other_user_wire.cc, shared with the helper.) The helper's protocol over a SOCK_SEQPACKET socket:
// one request (op byte, then the NUL-separated arguments), one reply (the errno as 4 bytes, the fd
// as SCM_RIGHTS).
bool send_other_request(int sock, OtherOp op, const std::vector<std::string>& args);
bool recv_other_request(int sock, OtherOp* op, std::vector<std::string>* args);
bool send_other_reply(int sock, const OtherResult& r);
bool recv_other_reply(int sock, OtherResult* r);

// (other_user.cc, the tests' side.) The other user, when one is at hand: `uid` is set and `why_not`
// empty; else `why_not` says what is missing. When tools/test.sh asks for one
// (VIGIL_REQUIRE_OTHER_USER=1), a missing one is a failure, not a skip.
struct OtherUser {
  uid_t uid = 0;
  gid_t gid = 0;
  std::string helper;  // the helper's socket; empty: act by fork and setuid (as root)
  std::string why_not;
  bool required = false;
};
OtherUser find_other_user();

// Acts as `who`: by fork and setuid as root, else through the helper. Bounded: a child
// or helper that does not answer within 20 s fails the act with ETIMEDOUT.
OtherResult act_as(const OtherUser& who, OtherOp op, const std::vector<std::string>& args);

// In a gtest body: binds `var` to the other user, or skips (fails, when tools/test.sh
// requires one) saying what is missing.
#define VIGIL_NEED_OTHER_USER(var)                                       \
  const ::vigil::test::OtherUser var = ::vigil::test::find_other_user(); \
  if (!var.why_not.empty()) {                                            \
    if (var.required) FAIL() << var.why_not;                             \
    GTEST_SKIP() << var.why_not;                                         \
  }

}  // namespace vigil::test
