// What the emulator (emulate.h) and the caller's view it works through (caller_view.h)
// share: a performed call's outcome, the gate asked before a name is made, and the
// pre-images' hooks. Their own header, so that neither of the two includes the other.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>

#include "supervisor/core/base/unique_fd.h"

namespace vigil::init {

struct Performed {
  std::int64_t value = 0;  // the call's return value when error == 0
  int error = 0;           // the errno the call failed with (0: it succeeded)
  UniqueFd fd;             // an open: ours, to install in the caller
  bool cloexec = false;    // the caller asked for O_CLOEXEC
  // The open would block (a FIFO with no peer yet): nothing was performed; run it again
  // with perform(..., /*may_block=*/true) on a thread of its own.
  bool would_block = false;
  std::string resolved;       // the target's real name in the sandbox's view, "" unknown
  std::string from_resolved;  // rename/link: the old name's
  std::string why;            // set when vigil-init itself could not reach the caller's view
  // An open that created its file: the file's identity, so that it can be taken back when
  // the fd cannot be installed after all (caller_view::undo_created).
  bool created = false;
  dev_t created_dev = 0;
  ino_t created_ino = 0;
};

// Asked before a call creates a name (open with O_CREAT, mkdir, mknod, link, symlink,
// rename's new name), with the name's real path: a reason refuses it with EACCES.
using Gate = std::function<std::string(const std::string& name)>;

// The pre-images' hooks (observer/capture.h). `before` is called just before a call
// changes or removes what a name is now (an open that truncates, unlink, rename over it,
// truncate), with where the call resolves it from: `rest` under `dir` ("" : `dir`
// itself), the call's RESOLVE_* bits, and whether a final symlink is followed. `opened`
// is called instead for an open for writing that changes nothing by itself (no O_TRUNC)
// and found the file there: with the fd it opened and its name, before the caller gets
// the fd (so before it can write), which costs no lookup of its own.
struct Keep {
  std::function<void(int dir, const std::string& rest, std::uint64_t resolve, bool follow)> before;
  std::function<void(int fd, const std::string& name)> opened;
};

}  // namespace vigil::init
