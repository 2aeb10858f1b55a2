#include "supervisor/backstop/change_clock.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace vigil {
namespace {

// The inode's change time; reading it is also what makes the kernel stamp the next change
// of that inode fine-grained when it comes within the same tick.
std::optional<timespec> change_time(int fd) {
  struct statx sx {};
  if (::statx(fd, "", AT_EMPTY_PATH, STATX_CTIME, &sx) != 0 || (sx.stx_mask & STATX_CTIME) == 0)
    return std::nullopt;
  return timespec{static_cast<time_t>(sx.stx_ctime.tv_sec),
                  static_cast<long>(sx.stx_ctime.tv_nsec)};
}

// A change (the mode set to what it is) stamps the inode's change time.
bool change(int fd) { return ::fchmod(fd, 0600) == 0; }

// Forces a fine-grained stamp on `probe` and returns it. A change is stamped with the later
// of the coarse clock and the floor, unless the inode's change time was read since its
// last change and that later value is not above it: then the kernel takes the fine clock
// (and raises the floor to it). So: change and read (A), then change and read again (B).
// Every change made before this call is stamped at or below A (the floor and the coarse
// clock only grow). B above A and above the coarse clock read after it is a fresh stamp:
// every later change is stamped at or above B, every earlier one below it. (B may be the
// floor another task's fine stamp just raised: that task's change raced this call.)
// B not above A (the floor was already there) or not above the coarse clock (a tick
// passed): once more, B as the new A.
std::optional<timespec> force_fine_stamp(int probe) {
  if (!change(probe)) return std::nullopt;
  auto before = change_time(probe);
  for (int attempt = 0; before && attempt < 3; ++attempt) {
    if (!change(probe)) return std::nullopt;
    const auto stamped = change_time(probe);
    timespec coarse{};
    ::clock_gettime(CLOCK_REALTIME_COARSE, &coarse);
    if (!stamped) return std::nullopt;
    if (timespec_after(*stamped, *before) && timespec_after(*stamped, coarse)) return stamped;
    before = stamped;
  }
  return std::nullopt;
}

UniqueFd unnamed_file(const std::string& dir) {
  return UniqueFd(::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
}

}  // namespace

bool timespec_after(const timespec& a, const timespec& b) {
  return a.tv_sec != b.tv_sec ? a.tv_sec > b.tv_sec : a.tv_nsec > b.tv_nsec;
}

Result<ChangeClock> ChangeClock::open(const std::string& dir) {
  UniqueFd probe = unnamed_file(dir);
  if (!probe)
    return make_error(Errc::kUnsupported,
                      "no unnamed file in " + dir + ": " + std::strerror(errno));
  for (int attempt = 0; attempt < 5; ++attempt) {
    // A witness whose change time nobody read: its next change is stamped as any file's.
    UniqueFd witness = unnamed_file(dir);
    if (!witness) break;
    const auto forced = force_fine_stamp(probe.get());
    if (!forced) continue;
    if (!change(witness.get())) break;
    const auto witnessed = change_time(witness.get());
    timespec coarse{};
    ::clock_gettime(CLOCK_REALTIME_COARSE, &coarse);
    if (!witnessed) break;
    // A tick since the forced stamp would stamp the witness above it without any floor:
    // inconclusive, tried again.
    if (!timespec_after(*forced, coarse)) continue;
    if (timespec_after(*forced, *witnessed))
      return make_error(Errc::kUnsupported,
                        "this kernel stamps changes below a fine-grained stamp "
                        "taken before them (no multigrain floor)");
    return ChangeClock(std::move(probe));
  }
  return make_error(Errc::kUnsupported, "no fine-grained change stamp could be had in " + dir);
}

std::optional<timespec> ChangeClock::stamp() {
  const std::lock_guard<std::mutex> lock(mu_);
  return force_fine_stamp(probe_.get());
}

ChangeStart change_start(ChangeClock* clock) {
  if (clock != nullptr) {
    if (auto t = clock->stamp()) return {*t, true};
  }
  ChangeStart s;
  ::clock_gettime(CLOCK_REALTIME, &s.at);
  return s;
}

}  // namespace vigil
