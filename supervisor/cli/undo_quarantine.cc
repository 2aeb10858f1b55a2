#include "supervisor/cli/undo_quarantine.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>

#include "supervisor/core/base/diagnostics.h"
#include "supervisor/core/base/write_all.h"
#include "supervisor/core/events/event_schema.h"
#include "supervisor/log/log_stream.h"
#include "supervisor/log/session_log.h"
#include "supervisor/replay/replay_feed.h"

namespace vigil {
namespace {

using events::escape_for_terminal;

UniqueFd open_parent(const std::string& path, std::string* last) {
  const auto slash = path.rfind('/');
  if (path.empty() || path[0] != '/' || slash == std::string::npos || slash + 1 == path.size())
    return UniqueFd();
  *last = path.substr(slash + 1);
  open_how how{};
  how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  const std::string dir = slash == 0 ? "/" : path.substr(0, slash);
  return UniqueFd(static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, dir.c_str(), &how, sizeof how)));
}

// Appends the removed lines to the config again (never through a symlink).
Result<void> put_lines_back(const events::FsQuarantine& q) {
  std::string last;
  UniqueFd dir = open_parent(q.path, &last);
  if (!dir) return system_error("cannot reach its directory");
  UniqueFd fd(::openat(dir.get(), last.c_str(), O_RDWR | O_APPEND | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return system_error("cannot open it");
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
    return make_error(Errc::kRefused, "not a regular file any more");
  // A file that does not end its last line would glue the first restored line to it.
  if (st.st_size > 0) {
    char c = 0;
    if (::pread(fd.get(), &c, 1, st.st_size - 1) == 1 && c != '\n')
      VIGIL_TRY_VOID(write_all(fd.get(), "\n", q.path));
  }
  return write_all(fd.get(), q.restore, q.path);
}

// Moves a whole quarantined item back, never over something.
Result<void> move_back(const events::FsQuarantine& q) {
  std::string from_last, to_last;
  UniqueFd from = open_parent(q.moved_to, &from_last);
  UniqueFd to = open_parent(q.path, &to_last);
  if (!from || !to) return system_error("cannot reach its directory");
  if (::syscall(SYS_renameat2, from.get(), from_last.c_str(), to.get(), to_last.c_str(),
                RENAME_NOREPLACE) != 0)
    return system_error("cannot move it back");
  return {};
}

// Whether `moved_to` is inside one of the session's quarantines: <root>/<session> or
// <root>/<session>-<N> (log/session_log.h store_name_order()).
bool in_session_quarantine(const std::string& moved_to, const std::string& session,
                           const std::string& quarantine_dir) {
  const std::string root = quarantine_dir.substr(0, quarantine_dir.rfind('/'));
  if (!path_within(moved_to, root) || moved_to.size() <= root.size() + 1) return false;
  const std::string rest = moved_to.substr(root.size() + 1);
  const std::string name = rest.substr(0, rest.find('/'));
  return name != rest && store_name_order(name, session) >= 0;
}

}  // namespace

int undo_quarantined(const replay::Feed& feed, const std::string& session, const HostScope& scope,
                     const std::string& quarantine_dir, bool dry_run) {
  std::size_t done = 0, left = 0;
  auto fed = feed([&](const LogRecord& r) {
    const auto* q = std::get_if<events::FsQuarantine>(&r.event.body);
    if (q == nullptr || q->moved_to.empty()) return true;
    const bool lines = !q->restore.empty();
    const std::string what = std::string(lines ? "append the removed lines to " : "move back ") +
                             escape_for_terminal(q->path);
    std::string cannot;
    if (!in_host_scope(scope, q->path)) {
      cannot = "outside the session's writable roots";
    } else if (!lines && !in_session_quarantine(q->moved_to, session, quarantine_dir)) {
      cannot = "the log names a place outside the session's quarantine";
    }
    if (!cannot.empty()) {
      ++left;
      // display-safe: `what` is escape_for_terminal() pieces and words of ours
      std::printf("left    %s  (%s)\n", what.c_str(), escape_for_terminal(cannot).c_str());
      return true;
    }
    if (dry_run) {
      ++done;
      // display-safe: as above
      std::printf("would   %s\n", what.c_str());
      return true;
    }
    auto res = lines ? put_lines_back(*q) : move_back(*q);
    if (res) {
      ++done;
      // display-safe: as above
      std::printf("done    %s\n", what.c_str());
    } else {
      ++left;
      // display-safe: as above
      std::printf("FAILED  %s  (%s)\n", what.c_str(), escape_for_terminal(res.error().message).c_str());
    }
    return true;
  });
  if (!fed) {
    print_error(fed.error().message);
    return 2;
  }
  if (done + left == 0) std::printf("nothing was quarantined in this session\n");
  std::printf("%zu item(s) %s, %zu left\n", done, dry_run ? "to put back" : "put back", left);
  return left == 0 ? 0 : 1;
}

}  // namespace vigil
