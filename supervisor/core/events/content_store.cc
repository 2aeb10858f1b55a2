#include "supervisor/core/events/content_store.h"

#include <fcntl.h>
#if defined(__linux__)
#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#endif
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>

#include "supervisor/core/base/sha256.h"
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/core/base/write_all.h"

namespace vigil {
namespace {

std::string errno_text(int err) {
  const char* n = ::strerrorname_np(err);
  return n != nullptr ? n : "E" + std::to_string(err);
}

// How long one image may read: far more than the caps take on any disk (16 MiB at a
// few MB/s), far less than a command's patience. A read slower than this (a network
// file system stalling) is given up, said in the note, never waited out.
constexpr auto kReadTimeBound = std::chrono::seconds(10);

// Reads `from` from its start, hashing it and, when `to` >= 0, writing it there: at most
// `limit` bytes and one more (to tell that there was more), never past kReadTimeBound
// (ETIMEDOUT). The bytes read; -1 and errno on a failure.
long long hash_copy(int from, int to, Sha256* h, std::uint64_t limit) {
  // On the heap, per call: a thread_local array this size made every process start and
  // every thread of every vigil binary zero 64 KiB of TLS (16 page faults) before main().
  constexpr std::size_t kReadChunk = 1 << 16;
  const auto buf = std::make_unique_for_overwrite<char[]>(kReadChunk);
  const auto deadline = std::chrono::steady_clock::now() + kReadTimeBound;
  std::uint64_t total = 0;
  for (off_t at = 0;;) {
    if (total > limit) return static_cast<long long>(total);
    if (std::chrono::steady_clock::now() > deadline) {
      errno = ETIMEDOUT;
      return -1;
    }
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(kReadChunk, limit + 1 - total));
    const ssize_t n = ::pread(from, buf.get(), want, at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) return static_cast<long long>(total);
    h->update(buf.get(), static_cast<std::size_t>(n));
    if (to >= 0 &&
        !write_all(to, std::string_view(buf.get(), static_cast<std::size_t>(n)), "a copy"))
      return -1;
    at += n;
    total += static_cast<std::uint64_t>(n);
  }
}

// A file whose size says nothing of what a read returns, or whose read has effects or
// no end: procfs (/proc/self/pagemap reads as 256 GiB with st_size 0), sysfs, debugfs,
// tracefs, securityfs, configfs, cgroup, bpf, efivarfs, pstore. Named, never read. The
// file system's name, or nullptr for one whose files read as their size says.
const char* pseudo_source(int fd) {
#if defined(__linux__)
  struct statfs sf {};
  if (::fstatfs(fd, &sf) != 0) return nullptr;
  switch (static_cast<unsigned long>(sf.f_type)) {
    case PROC_SUPER_MAGIC: return "procfs";
    case SYSFS_MAGIC: return "sysfs";
    case DEBUGFS_MAGIC: return "debugfs";
    case TRACEFS_MAGIC: return "tracefs";
    case SECURITYFS_MAGIC: return "securityfs";
    case 0x62656570UL: return "configfs";  // CONFIGFS_MAGIC, not in every linux/magic.h
    case CGROUP_SUPER_MAGIC: return "cgroupfs";
    case CGROUP2_SUPER_MAGIC: return "cgroup2fs";
    case BPF_FS_MAGIC: return "bpffs";
    case EFIVARFS_MAGIC: return "efivarfs";
    case PSTOREFS_MAGIC: return "pstore";
    default: return nullptr;
  }
#else
  (void)fd;
  return nullptr;
#endif
}

}  // namespace

const char* to_string(Image::Type t) {
  switch (t) {
    case Image::Type::kAbsent:
      return "absent";
    case Image::Type::kFile:
      return "file";
    case Image::Type::kSymlink:
      return "symlink";
    case Image::Type::kDir:
      return "dir";
    case Image::Type::kOther:
      return "other";
  }
  return "other";
}

std::string cap_text(std::uint64_t bytes) {
  if (bytes != 0 && bytes % (std::uint64_t{1} << 30) == 0) return std::to_string(bytes >> 30) + " GiB";
  if (bytes != 0 && bytes % (std::uint64_t{1} << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes != 0 && bytes % (std::uint64_t{1} << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

Image ContentStore::take_image_at(int dir, const char* name) {
  // No symlink is followed anywhere on the way, not only at the end: the names come from
  // the command's records and are canonical, so a symlink on the way is one the command
  // planted after the call (`ws/a` swapped for a link to ~/.ssh) to have the supervisor
  // read, and keep, a file the sandbox could not. O_PATH|O_NOFOLLOW still returns a final
  // symlink itself, whose target is the image.
  open_how how{};
  how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  UniqueFd fd(static_cast<int>(::syscall(SYS_openat2, dir, name, &how, sizeof how)));
  if (!fd) {
    Image img;
    if (errno == ELOOP) {
      img.note = "not captured: a symlink on the way to it";
    } else if (errno != ENOENT && errno != ENOTDIR) {
      img.note = "not captured: " + errno_text(errno);
    }
    return img;
  }
  return take_image(fd.get());
}

Image ContentStore::take_image(int fd) {
  Image img;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    img.note = "not captured: " + errno_text(errno);
    return img;
  }
  img.mode = st.st_mode & 07777;
  img.uid = st.st_uid;
  img.gid = st.st_gid;
  img.size = static_cast<std::uint64_t>(st.st_size);
  if (S_ISLNK(st.st_mode)) {
    img.type = Image::Type::kSymlink;
    char buf[PATH_MAX];
    const ssize_t n = ::readlinkat(fd, "", buf, sizeof buf);
    if (n >= 0) img.target.assign(buf, static_cast<std::size_t>(n));
    return img;
  }
  if (S_ISDIR(st.st_mode)) {
    img.type = Image::Type::kDir;  // its mode and owner, for undo to make it again
    img.size = 0;
    return img;
  }
  if (!S_ISREG(st.st_mode)) {
    img.type = Image::Type::kOther;
    return img;
  }
  img.type = Image::Type::kFile;
  keep_content(fd, &img);
  return img;
}

void ContentStore::keep_content(int path_fd, Image* img) {
  // Our own fd's magic link: the file this O_PATH fd already is, opened for reading.
  const std::string self = "/proc/self/fd/" + std::to_string(path_fd);
  UniqueFd src(::open(self.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!src) {
    img->note = "not captured: unreadable (" + errno_text(errno) + ")";
    return;
  }
  if (const char* fs = pseudo_source(src.get())) {
    img->note = std::string("not captured: a file of ") + fs + " (its size says nothing of its content)";
    return;
  }
  // Every read has a bound: a file over a cap by its size is named with its size, never
  // read (a 1 TiB sparse file costs one fstat); one that grows past it while read is cut
  // off at the cap plus one byte and dropped. The session is charged what was kept.
  const std::uint64_t room = caps_.max_session_bytes > used_ ? caps_.max_session_bytes - used_ : 0;
  const std::string over_file = "not captured: over " + cap_text(caps_.max_file_bytes);
  const std::string over_session =
      "not captured: over " + cap_text(caps_.max_session_bytes) + " for the session";
  if (img->size > caps_.max_file_bytes) {
    img->note = over_file;
    return;
  }
  Sha256 h;
  if (dir_ < 0 || img->size > room) {
    // Hashed only (no store, or no room left in it): within the file cap still.
    const long long n = hash_copy(src.get(), -1, &h, caps_.max_file_bytes);
    if (n < 0) {
      img->note = "not captured: unreadable (" + errno_text(errno) + ")";
      return;
    }
    if (static_cast<std::uint64_t>(n) > caps_.max_file_bytes) {
      img->note = over_file;
      return;
    }
    img->size = static_cast<std::uint64_t>(n);
    img->sha256 = to_hex(h.finish());
    img->note = dir_ < 0 ? "not captured: no store" : over_session;
    return;
  }
  const std::uint64_t limit = std::min(caps_.max_file_bytes, room);
  if (pack_ && img->size <= kPackedMax) {
    keep_packed(src.get(), img, limit);
    return;
  }
  const std::string tmp = "tmp." + std::to_string(::getpid()) + "." + std::to_string(++counter_);
  UniqueFd out(::openat(dir_, tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!out) {
    img->note = "not captured: the store refused it (" + errno_text(errno) + ")";
    return;
  }
  // A reflink shares the blocks (copy-on-write): the copy costs no data I/O, and the
  // hash is read from the copy, so it names exactly what was kept.
  long long n = -1;
#if defined(FICLONE)
  const bool cloned = ::ioctl(out.get(), FICLONE, src.get()) == 0;
#else
  const bool cloned = false;
#endif
  if (cloned) {
    n = hash_copy(out.get(), -1, &h, limit);
  } else {
    n = hash_copy(src.get(), out.get(), &h, limit);
  }
  if (n < 0 || static_cast<std::uint64_t>(n) > limit) {
    img->note = n < 0 ? "not captured: unreadable (" + errno_text(errno) + ")"
                : static_cast<std::uint64_t>(n) > caps_.max_file_bytes ? over_file
                                                                        : over_session;
    ::unlinkat(dir_, tmp.c_str(), 0);
    return;
  }
  img->size = static_cast<std::uint64_t>(n);
  img->sha256 = to_hex(h.finish());
  if (::faccessat(dir_, img->sha256.c_str(), F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
    ::unlinkat(dir_, tmp.c_str(), 0);  // the same bytes are kept already
  } else if (::renameat(dir_, tmp.c_str(), dir_, img->sha256.c_str()) == 0) {
    used_ += img->size;
  } else {
    img->note = "not captured: the store refused it (" + errno_text(errno) + ")";
    ::unlinkat(dir_, tmp.c_str(), 0);
    return;
  }
  img->stored = true;
}

void ContentStore::use_pack() {
  if (dir_ >= 0 && !pack_) pack_ = std::make_unique<PackWriter>(dir_);
}

void ContentStore::keep_packed(int src, Image* img, std::uint64_t limit) {
  Sha256::Digest digest;
  const long long n = pack_->append(src, &digest, limit);
  if (n < 0) {
    img->note = "not captured: the store refused it (" + errno_text(errno) + ")";
    return;
  }
  if (static_cast<std::uint64_t>(n) > limit) {
    // It grew past a cap while it was read (its size was checked before): cut off there.
    pack_->drop_last();
    img->note = static_cast<std::uint64_t>(n) > caps_.max_file_bytes
                    ? "not captured: over " + cap_text(caps_.max_file_bytes)
                    : "not captured: over " + cap_text(caps_.max_session_bytes) + " for the session";
    return;
  }
  img->size = static_cast<std::uint64_t>(n);
  img->sha256 = to_hex(digest);
  if (!packed_.insert(img->sha256).second) {
    pack_->drop_last();  // the same bytes are in this pack already
  } else {
    used_ += img->size;
  }
  img->stored = true;
  img->packed = true;
}

}  // namespace vigil
