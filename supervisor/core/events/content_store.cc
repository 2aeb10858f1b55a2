#include "supervisor/core/events/content_store.h"

#include <fcntl.h>
#if defined(__linux__)
#include <linux/fs.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#endif
#include <sys/ioctl.h>
#if defined(__linux__)
#include <sys/statfs.h>
#endif
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
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

constexpr long long kOverCap = -2;

// Reads `from` (from its start) to its end but never more than `limit` bytes, hashing it
// and, when `to` >= 0, writing it there. The bytes read; -1 and errno on a failure;
// kOverCap when there is more than `limit` (a file that grew while it was read, or one
// whose size says nothing of what a read returns).
long long hash_copy(int from, int to, Sha256* h, std::uint64_t limit) {
  // On the heap, per call: a thread_local array this size made every process start and
  // every thread of every vigil binary zero 64 KiB of TLS (16 page faults) before main().
  constexpr std::size_t kChunk = 1 << 16;
  const auto buf = std::make_unique_for_overwrite<char[]>(kChunk);
  long long total = 0;
  for (off_t at = 0;;) {
    const ssize_t n = ::pread(from, buf.get(), kChunk, at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) return total;
    if (static_cast<std::uint64_t>(total) + static_cast<std::uint64_t>(n) > limit) return kOverCap;
    h->update(buf.get(), static_cast<std::size_t>(n));
    if (to >= 0 &&
        !write_all(to, std::string_view(buf.get(), static_cast<std::size_t>(n)), "a copy"))
      return -1;
    at += n;
    total += n;
  }
}

// A file of a filesystem whose files are made up when read (procfs, sysfs and their
// kind): its size says nothing of what a read returns (/proc/self/pagemap is 0 bytes by
// stat and 256 GiB by read), and reading it may do things. Named, never read.
const char* pseudo_filesystem(int fd) {
#if defined(__linux__)
  struct statfs fs {};
  if (::fstatfs(fd, &fs) != 0) return nullptr;
  switch (static_cast<unsigned long>(fs.f_type)) {
    case 0x9fa0: return "procfs";           // PROC_SUPER_MAGIC
    case 0x62656572: return "sysfs";        // SYSFS_MAGIC
    case 0x64626720: return "debugfs";      // DEBUGFS_MAGIC
    case 0x74726163: return "tracefs";      // TRACEFS_MAGIC
    case 0x73636673: return "securityfs";   // SECURITYFS_MAGIC
    case 0x27e0eb: return "cgroup";         // CGROUP_SUPER_MAGIC
    case 0x63677270: return "cgroup2";      // CGROUP2_SUPER_MAGIC
    case 0x6165676c: return "pstore";       // PSTOREFS_MAGIC
    case 0xcafe4a11: return "bpf";          // BPF_FS_MAGIC
    case 0xde5e81e4: return "efivarfs";     // EFIVARFS_MAGIC
    case 0x42494e4d: return "binfmt_misc";  // BINFMTFS_MAGIC
    case 0x65735546: return "fuse";         // FUSE_SUPER_MAGIC: its server answers reads
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
  if (const char* fs = pseudo_filesystem(src.get())) {
    img->note = std::string("not captured: a ") + fs + " file (named, not read)";
    return;
  }
  // Over a cap: recorded with its size, neither read nor hashed (a 1 TiB sparse file
  // costs one fstat, not an hour of reading zeros).
  const std::string over_file = "not captured: over " + cap_text(caps_.max_file_bytes);
  if (img->size > caps_.max_file_bytes) {
    img->note = over_file;
    return;
  }
  // Over the session's cap (or no store): hashed, within the file cap, not kept.
  std::string over;
  if (dir_ < 0) {
    over = "not captured: no store";
  } else if (used_ + img->size > caps_.max_session_bytes) {
    over = "not captured: over " + cap_text(caps_.max_session_bytes) + " for the session";
  }
  Sha256 h;
  if (!over.empty()) {
    const long long n = hash_copy(src.get(), -1, &h, caps_.max_file_bytes);
    if (n == kOverCap) {
      img->note = over_file;
      return;
    }
    if (n < 0) {
      img->note = "not captured: unreadable (" + errno_text(errno) + ")";
      return;
    }
    img->size = static_cast<std::uint64_t>(n);
    img->sha256 = to_hex(h.finish());
    img->note = over;
    return;
  }
  if (pack_ && img->size <= kPackedMax) {
    keep_packed(src.get(), img);
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
    n = hash_copy(out.get(), -1, &h, caps_.max_file_bytes);
  } else {
    n = hash_copy(src.get(), out.get(), &h, caps_.max_file_bytes);
  }
  if (n == kOverCap) {
    img->note = over_file;  // it grew past the cap while it was read
    ::unlinkat(dir_, tmp.c_str(), 0);
    return;
  }
  if (n < 0) {
    img->note = "not captured: unreadable (" + errno_text(errno) + ")";
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

void ContentStore::keep_packed(int src, Image* img) {
  Sha256::Digest digest;
  const long long n = pack_->append(src, &digest, caps_.max_file_bytes);
  if (n < 0 && errno == EFBIG) {
    img->note = "not captured: over " + cap_text(caps_.max_file_bytes);
    return;
  }
  if (n < 0) {
    img->note = "not captured: the store refused it (" + errno_text(errno) + ")";
    return;
  }
  img->size = static_cast<std::uint64_t>(n);
  img->sha256 = to_hex(digest);
  if (img->size > caps_.max_file_bytes) {
    // It grew past the file cap while it was read (its size was checked before).
    pack_->drop_last();
    img->note = "not captured: over " + cap_text(caps_.max_file_bytes);
    return;
  }
  if (!packed_.insert(img->sha256).second) {
    pack_->drop_last();  // the same bytes are in this pack already
  } else if (used_ + img->size > caps_.max_session_bytes) {
    // It grew past the session cap while it was read (its size was checked before).
    pack_->drop_last();
    packed_.erase(img->sha256);
    img->note = "not captured: over " + cap_text(caps_.max_session_bytes) + " for the session";
    return;
  } else {
    used_ += img->size;
  }
  img->stored = true;
  img->packed = true;
}

}  // namespace vigil
