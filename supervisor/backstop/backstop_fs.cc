#include "supervisor/backstop/backstop_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "supervisor/core/base/unique_fd.h"

namespace vigil::backstop_fs {

std::optional<Info> info_at(int dir_fd, const char* name) {
  struct statx sx {};
  if (::statx(dir_fd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_BASIC_STATS | STATX_BTIME,
              &sx) != 0) {
    return std::nullopt;
  }
  Info i;
  i.mode = sx.stx_mode;
  i.size = sx.stx_size;
  i.ctime = sx.stx_ctime;
  i.btime = sx.stx_btime;
  i.has_btime = (sx.stx_mask & STATX_BTIME) != 0;
  return i;
}

namespace {

bool at_or_after(const statx_timestamp& t, const timespec& start) {
  if (t.tv_sec != start.tv_sec) return t.tv_sec > start.tv_sec;
  return static_cast<long>(t.tv_nsec) >= start.tv_nsec;
}

}  // namespace

// Made (or, for a file, changed) during the session. A directory's ctime also moves when
// an entry is added, which does not make the directory itself new: its birth time does.
bool is_new(const Info& i, const timespec& start) {
  if (S_ISDIR(i.mode) && i.has_btime) return at_or_after(i.btime, start);
  return at_or_after(i.ctime, start);
}

std::string join(const std::string& dir, std::string_view name) {
  std::string out = dir;
  if (out.empty() || out.back() != '/') out.push_back('/');
  return out.append(name);
}

Result<std::string> read_small(int dir_fd, const char* name, std::size_t max) {
  UniqueFd fd(::openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (!fd) return system_error(std::string("cannot open ") + name);
  std::string out;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return system_error(std::string("cannot read ") + name);
    if (n == 0) return out;
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() > max) return make_error(Errc::kRefused, "larger than vigil judges");
  }
}

std::vector<DirEntry> list_dir(int fd) {
  std::vector<DirEntry> entries;
  UniqueFd dup(::dup(fd));
  if (!dup) return entries;
  DIR* d = ::fdopendir(dup.get());
  if (d == nullptr) return entries;
  (void)dup.release();  // closedir owns it now
  ::rewinddir(d);
  while (const dirent* e = ::readdir(d)) {
    const std::string_view n = e->d_name;
    if (n != "." && n != "..") entries.push_back(DirEntry{std::string(n), e->d_type});
  }
  ::closedir(d);
  std::sort(entries.begin(), entries.end(),
            [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
  return entries;
}

}  // namespace vigil::backstop_fs
