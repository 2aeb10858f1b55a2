#include "supervisor/core/events/content_pack.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string_view>

#include "supervisor/core/base/write_all.h"

namespace vigil {
namespace {

constexpr std::size_t kChunk = std::size_t{1} << 16;
constexpr std::size_t kFlushAt = std::size_t{1} << 20;  // one write per MiB, about

void put_size(char* at, std::uint64_t size) {
  for (int i = 0; i < 8; ++i) at[i] = static_cast<char>((size >> (8 * i)) & 0xff);
}

std::uint64_t get_size(const unsigned char* at) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | at[i];
  return v;
}

}  // namespace

int PackWriter::open_pack() {
  static std::uint64_t counter = 0;
  for (int tries = 0; tries < 8; ++tries) {
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    name_ = "pack." + std::to_string(::getpid()) + "." +
            std::to_string(static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ULL +
                           static_cast<std::uint64_t>(ts.tv_nsec)) +
            "." + std::to_string(++counter);
    fd_ = UniqueFd(::openat(dir_, name_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    if (fd_) break;
    if (errno != EEXIST) return errno;
  }
  if (!fd_) return EEXIST;
  buf_ = std::make_unique_for_overwrite<char[]>(kFlushAt + kChunk);
  std::memcpy(buf_.get(), kPackMagic, kPackMagicSize);
  len_ = kPackMagicSize;
  return 0;
}

int PackWriter::flush() {
  if (len_ == 0 || failed_ != 0) return failed_;
  if (const int e = pwrite_all(fd_.get(), std::string_view(buf_.get(), len_), end_); e != 0) {
    failed_ = errno = e;
    return failed_;
  }
  end_ += len_;
  len_ = 0;
  return 0;
}

long long PackWriter::append(int from, Sha256::Digest* digest, std::uint64_t limit) {
  if (failed_ != 0) {
    errno = failed_;
    return -1;
  }
  if (!fd_) {
    if (const int e = open_pack(); e != 0) {
      failed_ = e;
      errno = e;
      return -1;
    }
  }
  // Torn until patched: an all-ones size runs past any end (content_pack.h).
  if (len_ + kPackEntryHeader > kFlushAt && flush() != 0) {
    errno = failed_;
    return -1;
  }
  last_ = end_ + len_;
  std::memset(buf_.get() + len_, 0, 32);
  std::memset(buf_.get() + len_ + 32, 0xff, 8);
  len_ += kPackEntryHeader;
  Sha256 h;
  std::uint64_t total = 0;
  while (total <= limit) {
    if (len_ >= kFlushAt && flush() != 0) {
      errno = failed_;
      return -1;
    }
    char* const at = buf_.get() + len_;
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, limit + 1 - total));
    const ssize_t n = ::pread(from, at, want, static_cast<off_t>(total));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      drop_last();
      errno = e;
      return -1;
    }
    if (n == 0) break;
    h.update(at, static_cast<std::size_t>(n));
    len_ += static_cast<std::size_t>(n);
    total += static_cast<std::uint64_t>(n);
  }
  *digest = h.finish();
  char header[kPackEntryHeader];
  std::memcpy(header, digest->data(), 32);
  put_size(header + 32, total);
  if (last_ >= end_) {
    std::memcpy(buf_.get() + (last_ - end_), header, sizeof header);
  } else if (const int e = pwrite_all(fd_.get(), std::string_view(header, sizeof header), last_);
             e != 0) {
    failed_ = errno = e;
    return -1;
  }
  return static_cast<long long>(total);
}

void PackWriter::drop_last() {
  if (last_ >= end_) {
    len_ = static_cast<std::size_t>(last_ - end_);
    return;
  }
  // Part of it is in the file already: cut the file back to where it began.
  len_ = 0;
  if (::ftruncate(fd_.get(), static_cast<off_t>(last_)) != 0) {
    failed_ = errno;
    return;
  }
  end_ = last_;
}

int PackWriter::sync() {
  if (!fd_) return failed_;
  return flush();
}

std::unordered_map<std::string, PackSpot> index_packs(const std::string& dir) {
  std::unordered_map<std::string, PackSpot> out;
  UniqueFd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dfd) return out;
  UniqueFd listed(::dup(dfd.get()));
  std::unique_ptr<DIR, int (*)(DIR*)> d(listed ? ::fdopendir(listed.get()) : nullptr, ::closedir);
  if (!d) return out;
  (void)listed.release();  // the DIR owns it now
  while (const dirent* e = ::readdir(d.get())) {
    const std::string name = e->d_name;
    if (!name.starts_with("pack.")) continue;
    UniqueFd fd(::openat(dfd.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    const auto end = static_cast<std::uint64_t>(st.st_size);
    char magic[kPackMagicSize];
    if (::pread(fd.get(), magic, sizeof magic, 0) != static_cast<ssize_t>(sizeof magic) ||
        std::memcmp(magic, kPackMagic, sizeof magic) != 0)
      continue;
    for (std::uint64_t at = kPackMagicSize; at + kPackEntryHeader <= end;) {
      unsigned char h[kPackEntryHeader];
      if (::pread(fd.get(), h, sizeof h, static_cast<off_t>(at)) != static_cast<ssize_t>(sizeof h))
        break;
      const std::uint64_t size = get_size(h + 32);
      const std::uint64_t body = at + kPackEntryHeader;
      if (size > end - body) break;  // torn (content_pack.h)
      Sha256::Digest digest;
      std::memcpy(digest.data(), h, 32);
      out.try_emplace(to_hex(digest), PackSpot{name, body, size});
      at = body + size;
    }
  }
  return out;
}

}  // namespace vigil
