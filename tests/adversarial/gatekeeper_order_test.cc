// The gatekeeper answers an open it performed with SECCOMP_ADDFD_FLAG_SEND: the caller
// runs on the moment its fd is installed, while vigil-init closes its own copy a few
// microseconds later. The calls that could see that copy (a flock or an OFD lock, which
// live until a file's last close; a read lease, refused while any writer is open; an exec
// of the file, ETXTBSY while any writer is open) are trapped and continued by the notify
// loop only after the copy is gone (ordered_syscalls(), supervisor/core/events/
// syscall_table.h). Each check runs right after the command's own close, 3,000 times, so
// that a copy left open even once shows.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "tests/integration/harness.h"

namespace vigil::test {
namespace {

std::string probe_bin() {
  if (const char* p = std::getenv("VIGIL_PROBE"); p != nullptr && *p != '\0') return p;
  return VIGIL_DEFAULT_PROBE;
}

constexpr const char* kRounds = "3000";

void expect_in_order(const std::string& op) {
  TempDir ws, cfg;
  auto o = run_vigil({"run", "--log", cfg / "log.jsonl", "--", probe_bin(), op, ws / "f", kRounds},
                     ws.path(), 300);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(o.out, std::string("ok ") + kRounds + "\n")
      << "a check right after the command closed its only fd of the file saw the file "
         "still open (vigil-init's copy outlived the caller's close)";
}

// open(O_WRONLY|O_CREAT) + flock(LOCK_EX) + write + close, then a new read-only open
// takes flock(LOCK_EX|LOCK_NB): EWOULDBLOCK if the first lock were still held.
TEST(GatekeeperOrder, AFlockRightAfterCloseIsFree) { expect_in_order("order-flock"); }

// As above with an OFD write lock (F_OFD_SETLKW), then F_OFD_SETLK from a new open.
TEST(GatekeeperOrder, AnOfdLockRightAfterCloseIsFree) { expect_in_order("order-ofd"); }

// A write-open, write, close, then F_SETLEASE(F_RDLCK) on a new read-only open: EAGAIN
// while any other open for writing of the file exists.
TEST(GatekeeperOrder, AReadLeaseRightAfterCloseIsGranted) { expect_in_order("order-lease"); }

// An executable (a script for /bin/true) written and closed, then exec'd at once.
TEST(GatekeeperOrder, AFileExecdRightAfterItsWriteIsNotBusy) {
  if (::access("/bin/true", X_OK) != 0) GTEST_SKIP() << "needs /bin/true";
  expect_in_order("order-exec");
}

}  // namespace
}  // namespace vigil::test
