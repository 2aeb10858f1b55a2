// bwrap's --json-status-fd lines, parsed: which pid the sandbox's init is ("child-pid")
// and the command's own exit status ("exit-code"). Pure; the launch reads the pipe
// (launch_wait.h) and hands the bytes here.
#pragma once

#include <sys/types.h>

#include <string>

namespace vigil {

struct BwrapStatus {
  pid_t init_pid = -1;  // the sandbox's init; -1 until bwrap said
  bool have_exit_code = false;
  int exit_code = 0;  // the command's status, when have_exit_code
};

// Consumes the complete lines at the front of `buf` into `out` (the rest stays for the
// next read). bwrap terminates every line; `at_end` also takes an unterminated last one.
// bwrap is trusted, but a line that does not parse is skipped rather than fatal.
void parse_status_lines(std::string* buf, bool at_end, BwrapStatus* out);

}  // namespace vigil
