#include "supervisor/backstop/undo_apply.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "supervisor/core/base/unique_fd.h"
#include "supervisor/core/base/write_all.h"
#include "supervisor/core/events/content_store.h"

namespace vigil::undo {
namespace {

std::string errno_name(int err) {
  const char* n = ::strerrorname_np(err);
  return n != nullptr ? n : "E" + std::to_string(err);
}

UniqueFd open_beneath(const std::string& path, std::uint64_t flags) {
  open_how how{};
  how.flags = flags | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return UniqueFd(static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how)));
}

struct Parent {
  UniqueFd fd;
  std::string last;
};
Result<Parent> parent_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (path.empty() || path[0] != '/' || slash == std::string::npos || slash + 1 == path.size())
    return make_error(Errc::kRefused, "not an absolute path to a name: " + path);
  Parent p;
  p.last = path.substr(slash + 1);
  p.fd = open_beneath(slash == 0 ? "/" : path.substr(0, slash), O_PATH | O_DIRECTORY);
  if (!p.fd) {
    return make_error(Errc::kSystem, errno == ELOOP ? "a symlink on the way to it"
                                                    : "its directory: " + errno_name(errno));
  }
  return p;
}

HostState look_on_host_impl(const std::string& path) {
  HostState s;
  UniqueFd fd = open_beneath(path, O_PATH | O_NOFOLLOW);
  if (!fd) {
    if (errno == ENOENT || errno == ENOTDIR) {
      s.type = "absent";
    } else {
      s.type = "unreachable";
      s.why = errno == ELOOP ? "a symlink on the way to it" : errno_name(errno);
    }
    return s;
  }
  ContentStore hash_only(-1, CaptureCaps{});
  const Image img = hash_only.take_image(fd.get());
  s.type = to_string(img.type);
  s.sha256 = img.sha256;
  s.target = img.target;
  return s;
}

// Owners are put back only by root, and never the overflow id a user namespace shows for
// an owner it does not map (the pre-image was taken inside the sandbox).
bool restore_owner(const events::FsImage& img) {
  return ::geteuid() == 0 && img.uid != 65534 && img.gid != 65534;
}

// The new thing is made under a fresh name beside the target, then renamed over it.
Result<void> restore(const Step& s, const StoredContentFn& read) {
  auto p = parent_of(s.path);
  VIGIL_TRY(p);
  const events::FsImage& img = s.want.image;
  const std::string tmp = ".vigil-undo." + std::to_string(::getpid()) + "." + p->last.substr(0, 32);
  ::unlinkat(p->fd.get(), tmp.c_str(), 0);  // a leftover of an interrupted undo of ours
  if (s.want.type == "symlink") {
    if (::symlinkat(img.target.c_str(), p->fd.get(), tmp.c_str()) != 0)
      return system_error("cannot make the symlink");
    if (restore_owner(img)) ::fchownat(p->fd.get(), tmp.c_str(), img.uid, img.gid, AT_SYMLINK_NOFOLLOW);
  } else {
    const StoredContent c = read(img);
    if (!c.ok) return make_error(Errc::kNotFound, c.why);
    UniqueFd out(::openat(p->fd.get(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!out) return system_error("cannot write beside it");
    auto w = write_all(out.get(), c.bytes, s.path);
    if (w && restore_owner(img) && ::fchown(out.get(), img.uid, img.gid) != 0)
      w = system_error("cannot give it back its owner");
    if (w && ::fchmod(out.get(), img.mode & 07777) != 0) w = system_error("cannot set its mode");
    if (!w) {
      ::unlinkat(p->fd.get(), tmp.c_str(), 0);
      return w;
    }
  }
  if (::renameat(p->fd.get(), tmp.c_str(), p->fd.get(), p->last.c_str()) != 0) {
    const Error e = system_error("cannot put it in place");
    ::unlinkat(p->fd.get(), tmp.c_str(), 0);
    return e;
  }
  return {};
}

Result<void> make_dir(const Step& s) {
  auto p = parent_of(s.path);
  VIGIL_TRY(p);
  const bool known = s.want.imaged();
  if (::mkdirat(p->fd.get(), p->last.c_str(), 0700) != 0) return system_error("cannot make it");
  UniqueFd d(::openat(p->fd.get(), p->last.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!d) return system_error("cannot open it");
  if (known && restore_owner(s.want.image)) ::fchown(d.get(), s.want.image.uid, s.want.image.gid);
  // Without an image (a log from before directories had them) the usual 0755.
  if (::fchmod(d.get(), known ? s.want.image.mode & 07777 : 0755) != 0)
    return system_error("cannot set its mode");
  return {};
}

}  // namespace

HostState look_on_host(const std::string& path) { return look_on_host_impl(path); }

CheckFn store_check(const StoredContentFn& read) {
  return [read](const events::FsImage& img) -> std::string {
    const StoredContent c = read(img);
    return c.ok ? std::string() : c.why;
  };
}

Result<void> apply_step(const Step& s, const StoredContentFn& read) {
  switch (s.op) {
    case Op::kRemove:
    case Op::kRemoveDir: {
      auto p = parent_of(s.path);
      VIGIL_TRY(p);
      if (::unlinkat(p->fd.get(), p->last.c_str(), s.op == Op::kRemoveDir ? AT_REMOVEDIR : 0) != 0)
        return system_error("cannot remove it");
      return {};
    }
    case Op::kMakeDir:
      return make_dir(s);
    case Op::kRestore:
      return restore(s, read);
    case Op::kRenameBack: {
      auto from = parent_of(s.path);
      VIGIL_TRY(from);
      auto to = parent_of(s.to);
      VIGIL_TRY(to);
      if (::syscall(SYS_renameat2, from->fd.get(), from->last.c_str(), to->fd.get(), to->last.c_str(),
                    RENAME_NOREPLACE) != 0)
        return system_error("cannot move it back");
      return {};
    }
  }
  return {};
}

}  // namespace vigil::undo
