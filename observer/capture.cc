#include "observer/capture.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

#include "observer/event_line.h"
#include "supervisor/core/fs/host_scope.h"  // path_within

namespace vigil::init {

void append_image_line(std::string* out, const std::string& phase, const std::string& path,
                       const Image& img, bool best_effort) {
  EventLine ev(out, "fs.image");
  ev.bytes("phase", phase).bytes("path", path).bytes("type", to_string(img.type));
  if (img.type != Image::Type::kAbsent) {
    ev.unsigned_number("size", img.size)
        .unsigned_number("mode", img.mode)
        .unsigned_number("uid", img.uid)
        .unsigned_number("gid", img.gid);
  }
  if (!img.sha256.empty()) ev.bytes("sha256", img.sha256);
  if (img.type == Image::Type::kSymlink) ev.bytes("target", img.target);
  if (img.stored) ev.boolean("stored", true);
  if (!img.note.empty()) ev.bytes("note", img.note);
  if (best_effort) ev.boolean("best_effort", true);
  ev.finish();
}

void Capture::keep(int dir, const std::string& rest, std::uint64_t resolve, bool follow,
                   std::string* out) {
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW);
  how.resolve = resolve | RESOLVE_NO_MAGICLINKS;
  // "": the fd itself (a truncate through /proc/self/fd/N), through our own magic link.
  const std::string own = "/proc/self/fd/" + std::to_string(dir);
  if (rest.empty()) how.resolve = 0;
  const long got = rest.empty() ? ::syscall(SYS_openat2, AT_FDCWD, own.c_str(), &how, sizeof how)
                                : ::syscall(SYS_openat2, dir, rest.c_str(), &how, sizeof how);
  if (got < 0) return;  // nothing there (or unreachable: the call fails the same way)
  UniqueFd fd(static_cast<int>(got));
  char name[PATH_MAX];
  const std::string self = "/proc/self/fd/" + std::to_string(fd.get());
  const ssize_t n = ::readlink(self.c_str(), name, sizeof name);
  if (n <= 0 || static_cast<std::size_t>(n) >= sizeof name) return;
  keep_opened(fd.get(), std::string(name, static_cast<std::size_t>(n)), out);
}

void Capture::keep_opened(int fd, const std::string& name, std::string* out) {
  if (name.empty() || name[0] != '/' || seen_.contains(name)) return;
  for (const std::string& t : skip_)
    if (path_within(name, t)) return;
  // A directory too (an rmdir, a rename over an empty one): its mode and owner, so that
  // undo can make it again as it was.
  struct stat st {};
  if (::fstat(fd, &st) != 0) return;
  seen_.insert(name);
  append_image_line(out, "pre", name, store_.take_image(fd), best_effort_);
}

}  // namespace vigil::init
