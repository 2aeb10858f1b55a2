// The one owning file-descriptor type. Every fd vigil opens lives in a UniqueFd;
// this file holds the only close() call in the code base (see unique_fd.cc).
// Move-only; not thread-safe (like any value). reset()/destructor are
// async-signal-safe, so a UniqueFd may be destroyed in a forked child.
#pragma once

#include <cstddef>
#include <span>
#include <utility>

namespace vigil {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  explicit operator bool() const { return valid(); }

  // Gives up ownership without closing.
  [[nodiscard]] int release() { return std::exchange(fd_, -1); }
  // Closes the current fd (if any) and takes ownership of `fd`.
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

// Closes every descriptor >= `first` this process holds: for vigil-init, so that no fd
// vigil's caller leaked (an open directory is a way out of any mount policy) reaches the
// command. Async-signal-safe.
void close_fds_from(int first);
// The same, but keeps every fd in `keep` open (negative ones and those below `first` are
// ignored). Async-signal-safe (no allocation): at most kMaxKept fds are kept; a longer
// list closes everything from `first`, which the caller sees at once.
inline constexpr std::size_t kMaxKept = 8;
void close_fds_from_except(int first, std::span<const int> keep);

}  // namespace vigil
