// The exporter's disk spool (issue 37): the framed syslog messages not yet taken by the
// collector, in the order they were read, in one append-only file beside the cursor.
// Every message goes through it (written and fdatasync'ed before the cursor that covers
// it is saved), so a collector that is down, slow or restarting loses nothing: the
// sender drains it in order from `acked` when the collector is back. It has a size cap:
// at the cap the exporter stops reading logs (they stay on disk, the cursor where it was)
// and says so loudly, in its own log and in `vigil doctor` (export_status.h). Emptied
// (truncated) whenever everything in it was taken.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil {

inline constexpr std::uint64_t kDefaultSpoolMaxBytes = 256ULL * 1024 * 1024;

class Spool {
 public:
  // Opens (creating, 0600, O_NOFOLLOW) `path`; refused when it is not a regular file of
  // ours closed to others. `acked` from the cursor: beyond the file's end (the file was
  // emptied after the cursor was saved) it is 0.
  static Result<Spool> open(const std::string& path, std::uint64_t cap, std::uint64_t acked);

  // Whether `bytes` more fit under the cap. A caller with nothing pending lets one
  // message bigger than the cap through (else it would wait for ever); see exporter.cc.
  bool has_room(std::uint64_t bytes) const { return size_ + bytes <= cap_; }
  bool full() const { return full_; }
  void set_full(bool f) { full_ = f; }
  Result<void> append(std::string_view frames);  // written and fdatasync'ed
  // Up to `max` bytes from `offset` (an offset it gave out: a frame boundary).
  Result<std::string> read(std::uint64_t offset, std::size_t max) const;
  // Everything before `upto` was taken; when that is all of it, the file is emptied.
  Result<void> ack(std::uint64_t upto);

  std::uint64_t size() const { return size_; }
  std::uint64_t acked() const { return acked_; }
  std::uint64_t cap() const { return cap_; }
  std::uint64_t pending() const { return size_ - acked_; }

 private:
  Spool() = default;
  // The end of the last whole frame ("LEN SP MSG") from `acked_` on.
  std::uint64_t whole_frames_end() const;
  UniqueFd fd_;
  std::uint64_t size_ = 0;
  std::uint64_t acked_ = 0;
  std::uint64_t cap_ = 0;
  bool full_ = false;
};

}  // namespace vigil
