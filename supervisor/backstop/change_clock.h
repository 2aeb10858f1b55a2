// When "during the command" starts for the backstop (backstop.h), taken so that nothing
// has to wait for it.
//
// The backstop tells the command's changes from the host's earlier ones by the inode's
// change time. The kernel stamps most changes with its coarse clock (the last tick: up to
// two ticks, 8 ms at HZ=250, behind the real time), so a start read from the fine clock
// only separates the two once the coarse clock has passed it: wait_for_coarse_clock()
// slept a median 6 ms of every command's start on this machine kind.
//
// Since Linux 6.13 every change is stamped with the later of the coarse clock and a
// global floor, which the kernel raises whenever it hands out a fine-grained stamp (a
// change to an inode whose change time was read since its last change, within the same
// tick). So forcing one fine-grained stamp on a probe file of our own both names a start
// T and guarantees every later change, on every local filesystem, a change time >= T,
// while every change made before it has one < T (or == T: only a change racing ours).
//
// Nothing here is assumed from the kernel's version: open() checks on a file of its own
// that a change made after a forced stamp, in the same tick, is stamped at or after it
// (which no kernel without the floor does), and stamp() checks that what it got was not a
// coarse stamp. Without that, there is no ChangeClock and the caller waits as before.
//
// Thread-safe (one probe, one stamp at a time).
#pragma once

#include <time.h>

#include <mutex>
#include <optional>
#include <string>

#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil {

// The backstop's start, and whether changes from then on are stamped at or after it
// already (a floor stamp) or only once the coarse clock has passed it (then wait).
struct ChangeStart {
  timespec at{};
  bool floor = false;
};

class ChangeClock {
 public:
  // Unnamed probe files (O_TMPFILE) in `dir`, a directory of the caller's own on a local
  // filesystem. Errc::kUnsupported when this kernel (or that filesystem) has no floor.
  static Result<ChangeClock> open(const std::string& dir);
  ChangeClock(ChangeClock&& other) noexcept : probe_(std::move(other.probe_)) {}

  // A floor stamp; none in the rare case three tries met a clock tick each (or the probe
  // failed): then the caller falls back to now() and waits.
  std::optional<timespec> stamp();

 private:
  explicit ChangeClock(UniqueFd probe) : probe_(std::move(probe)) {}
  std::mutex mu_;
  UniqueFd probe_;
};

// a strictly after b.
bool timespec_after(const timespec& a, const timespec& b);

// The start for a command: the clock's floor stamp when there is one, else the fine
// clock now (and `floor` false: wait_for_coarse_clock() before the command runs).
ChangeStart change_start(ChangeClock* clock);

}  // namespace vigil
