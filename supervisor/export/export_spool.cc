#include "supervisor/export/export_spool.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "supervisor/core/base/write_all.h"

namespace vigil {

Result<Spool> Spool::open(const std::string& path, std::uint64_t cap, std::uint64_t acked) {
  Spool s;
  s.fd_ = UniqueFd(::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!s.fd_) return system_error("cannot open the export spool " + path);
  struct stat st {};
  if (::fstat(s.fd_.get(), &st) != 0) return system_error("cannot stat " + path);
  if (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 022) != 0) {
    return make_error(Errc::kRefused, path + " is not a regular file of ours closed to others: "
                                             "refusing to use it as the export spool");
  }
  s.size_ = static_cast<std::uint64_t>(st.st_size);
  s.acked_ = acked <= s.size_ ? acked : 0;
  // A crash in the middle of an append leaves a torn last frame: cut it off (its records
  // are read from their logs again, the cursor not having passed them).
  const std::uint64_t whole = s.whole_frames_end();
  if (whole < s.size_) {
    if (::ftruncate(s.fd_.get(), static_cast<off_t>(whole)) != 0)
      return system_error("cannot cut the torn end off the export spool " + path);
    s.size_ = whole;
  }
  s.cap_ = cap;
  return s;
}

std::uint64_t Spool::whole_frames_end() const {
  std::uint64_t at = acked_;
  while (at < size_) {
    char head[24];
    const ssize_t n = ::pread(fd_.get(), head, sizeof head, static_cast<off_t>(at));
    if (n <= 0) break;
    std::uint64_t len = 0;
    ssize_t i = 0;
    while (i < n && i < 10 && head[i] >= '0' && head[i] <= '9') len = len * 10 + static_cast<std::uint64_t>(head[i++] - '0');
    if (i == 0 || i >= n || head[i] != ' ') break;
    const std::uint64_t end = at + static_cast<std::uint64_t>(i) + 1 + len;
    if (end > size_) break;
    at = end;
  }
  return at;
}

Result<void> Spool::append(std::string_view frames) {
  VIGIL_TRY_VOID(write_all(fd_.get(), frames, "the export spool"));
  if (::fdatasync(fd_.get()) != 0) return system_error("cannot sync the export spool");
  size_ += frames.size();
  return {};
}

Result<std::string> Spool::read(std::uint64_t offset, std::size_t max) const {
  std::string out(static_cast<std::size_t>(std::min<std::uint64_t>(max, size_ - offset)), '\0');
  std::size_t got = 0;
  while (got < out.size()) {
    const ssize_t n = ::pread(fd_.get(), out.data() + got, out.size() - got,
                              static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return system_error("cannot read the export spool");
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  out.resize(got);
  return out;
}

Result<void> Spool::ack(std::uint64_t upto) {
  acked_ = std::max(acked_, std::min(upto, size_));
  if (acked_ == size_ && size_ > 0) {
    if (::ftruncate(fd_.get(), 0) != 0) return system_error("cannot empty the export spool");
    size_ = 0;
    acked_ = 0;
  }
  return {};
}

}  // namespace vigil
