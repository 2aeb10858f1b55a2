#include "supervisor/launch/launch_gate.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "observer/mount_table.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil {
namespace {

// While a change of the sandbox's mount table is unread: how long without another before
// bwrap is looked at.
constexpr long kRecheckNs = 250'000;

// Whether the process is running or waiting for a CPU (state R in its /proc/PID/stat,
// `stat_fd`, read again from the start), as opposed to asleep. Unreadable: taken as
// asleep, so the table is read (as at any change).
bool is_running(int stat_fd) {
  char buf[512];
  const ssize_t n = ::pread(stat_fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return false;
  const std::string_view stat(buf, static_cast<std::size_t>(n));
  const auto close = stat.rfind(')');  // the name may hold anything, ")" included
  return close != std::string_view::npos && close + 2 < stat.size() && stat[close + 2] == 'R';
}

Result<std::string> read_all(int fd, const std::string& what) {
  std::string text;
  char buf[16384];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  if (n < 0) return system_error("reading " + what);
  return text;
}

// (device, inode) of `path` inside the sandbox's root, resolved there without following
// any symlink: the same lstat vigil did on the host, seen from inside.
std::optional<std::pair<std::uint64_t, std::uint64_t>> identity_in(int root,
                                                                   const std::string& path) {
  open_how how{};
  how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  const std::string rel = path == "/" ? "." : path.substr(1);
  UniqueFd fd(static_cast<int>(::syscall(SYS_openat2, root, rel.c_str(), &how, sizeof how)));
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0) return std::nullopt;
  return std::make_pair(static_cast<std::uint64_t>(st.st_dev),
                        static_cast<std::uint64_t>(st.st_ino));
}

}  // namespace

Result<std::vector<ExpectedMount>> host_identities(std::span<const std::string> writable_paths) {
  std::vector<ExpectedMount> out;
  for (const auto& path : writable_paths) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return system_error("cannot stat " + path);
    out.push_back(ExpectedMount{path, st.st_dev, st.st_ino});
  }
  return out;
}

Result<void> check_sandbox_mounts(pid_t sandbox_pid, std::span<const PlannedMount> planned,
                                  std::span<const ExpectedMount> writable,
                                  std::chrono::milliseconds budget) {
  if (planned.empty()) return make_error(Errc::kInternal, "the launch check has no plan");
  const std::string proc = "/proc/" + std::to_string(sandbox_pid);
  // Its exit ends the wait (a table that never becomes final is bwrap failing).
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, sandbox_pid, 0)));
  if (!pidfd) return system_error("pidfd_open of the sandbox");
  const auto deadline = std::chrono::steady_clock::now() + budget;
  // The host's table is read while bwrap still builds, off the path where it is held: it
  // only vouches for sandbox mounts found at the same place with the same filesystem and
  // root, so a host mount made after this read is refused, never let through.
  auto host = init::load_mount_table();
  VIGIL_TRY(host);
  std::vector<init::Mount> table;
  // bwrap makes ~20 mounts one after another, and each read of the table makes the kernel
  // render every line of it (the host's mounts under /oldroot included): read at each
  // change, that was half of what the supervisor spent per command, more on a loaded
  // machine. Only the final table matters, and bwrap is asleep once it has made it
  // (blocked on --block-fd): so a change is noted, and the table read when bwrap is seen
  // asleep. Nothing depends on when it is read: a table that is not final is read again
  // at a later change, and only a final one is judged.
  UniqueFd fd;
  const UniqueFd stat_fd(::open((proc + "/stat").c_str(), O_RDONLY | O_CLOEXEC));
  bool read_now = true;  // the first time, at once
  bool changed = false;  // a change not read yet
  while (true) {
    if (read_now) {
      // Opened anew each time: the file shows paths from the root the process had at
      // open, and bwrap changes its root while it builds.
      fd = UniqueFd(::open((proc + "/mountinfo").c_str(), O_RDONLY | O_CLOEXEC));
      if (!fd) return system_error("the sandbox ended before its mounts were checked: " + proc);
      auto text = read_all(fd.get(), proc + "/mountinfo");
      VIGIL_TRY(text);
      auto parsed = init::parse_mountinfo(*text);
      VIGIL_TRY(parsed);
      if (table_is_final(*parsed, planned.back().dest)) {
        table = std::move(parsed).value();
        break;
      }
    }
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) {
      return make_error(Errc::kSystem, "bwrap did not finish the sandbox's mounts within " +
                                           std::to_string(budget.count()) + " ms");
    }
    // The table signals every change since the open, then since the last poll, with
    // POLLPRI: nothing is missed between a read and the wait. While a change is unread,
    // bwrap is looked at when kRecheckNs pass without another, for the sleep that follows
    // its last one.
    const auto wait = changed ? std::min<std::chrono::steady_clock::duration>(
                                    left, std::chrono::nanoseconds(kRecheckNs))
                              : left;
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(wait).count();
    const timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
    pollfd fds[2] = {{fd.get(), POLLPRI, 0}, {pidfd.get(), POLLIN, 0}};
    if (::ppoll(fds, 2, &ts, nullptr) < 0 && errno != EINTR) return system_error("ppoll");
    if (fds[1].revents != 0) {
      // bwrap gave up while building the mounts; its own words may still be on their way
      // through the stderr pipe, so this line names where to look for the cause.
      return make_error(Errc::kSystem,
                        "the sandbox ended before its mounts were checked (bwrap could not build "
                        "it: `vigil doctor` names the cause; in a container whose /proc is "
                        "masked, see enableWeakerNestedSandbox)");
    }
    // bwrap is looked at only once the changes pause (a wait that ran out): during the
    // build it is running anyway, and rendering its /proc/PID/stat is not free either.
    const bool more = (fds[0].revents & POLLPRI) != 0;
    read_now = changed && !more && (!stat_fd || !is_running(stat_fd.get()));
    changed = changed || more;
    if (read_now) changed = false;
  }
  UniqueFd root(::open((proc + "/root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root) return system_error("open " + proc + "/root");
  LaunchTables t;
  t.planned = planned;
  t.writable = writable;
  t.sandbox = &table;
  t.host = &*host;
  return check_launch_table(t, [&](const std::string& p) { return identity_in(root.get(), p); });
}

}  // namespace vigil
