// The change captures' content-addressed store: a directory of files named by the
// SHA-256 of their bytes (64 lower-case hex digits), written by vigil-init (pre-images,
// through a directory fd the supervisor passes in: no sandbox can name the directory)
// and by the supervisor (post-images). One file is kept once however often it is seen.
//
// take_image() is the one way an image is taken, so that both sides describe a file the
// same way: lstat-like facts (type, mode, owner, size, a symlink's target), the content's
// hash, and whether the content was kept within the caps (vigil.capture).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>

#include "supervisor/core/events/content_pack.h"

#include "supervisor/core/policy/policy.h"  // CaptureCaps (vigil.capture)

namespace vigil {

struct Image {
  enum class Type { kAbsent, kFile, kSymlink, kDir, kOther };
  Type type = Type::kAbsent;
  std::uint64_t size = 0;
  std::uint32_t mode = 0;  // permission bits (07777)
  std::uint32_t uid = 0, gid = 0;
  std::string sha256;  // a file's content ("" when it could not be read)
  std::string target;  // a symlink's contents
  bool stored = false;  // the content is in the store under sha256
  std::string note;     // why the content was not kept ("not captured: over 16 MiB")
  bool packed = false;  // stored in the pack being written (ContentStore::use_pack)
};

const char* to_string(Image::Type t);

// "16 MiB", "1 GiB", "1000 bytes": a cap as the note names it.
std::string cap_text(std::uint64_t bytes);

// Keeps files in one store directory, counting what it adds against the session cap.
class ContentStore {
 public:
  // `dir`: the store directory (not owned; -1: hash only, keep nothing).
  ContentStore(int dir, CaptureCaps caps) : dir_(dir), caps_(caps) {}

  // The image of what `fd` is (an O_PATH fd of the name, never followed further).
  Image take_image(int fd);
  // The image of `name` under `dir` (AT_FDCWD and an absolute name: the host's), not
  // following a final symlink; absent when nothing is there.
  Image take_image_at(int dir, const char* name);

  // From now on, files up to kPackedMax go into one pack (content_pack.h) instead of a
  // store file each. Their images say stored before the pack is written: sync_pack()
  // writes it, and an image is only logged as stored after a sync that succeeded.
  void use_pack();
  static constexpr std::uint64_t kPackedMax = std::uint64_t{1} << 20;
  // 0, or the errno of a pack write that failed (images packed since the last successful
  // sync are then not in the store).
  int sync_pack() { return pack_ ? pack_->sync() : 0; }

  std::uint64_t used_bytes() const { return used_; }
  // Counts bytes kept by someone else (vigil-init's pre-images) against the session cap.
  void count_used(std::uint64_t bytes) { used_ += bytes; }

 private:
  void keep_content(int fd, Image* img);
  void keep_packed(int src, Image* img, std::uint64_t limit);
  int dir_;
  std::unique_ptr<PackWriter> pack_;
  std::unordered_set<std::string> packed_;  // hashes in pack_
  CaptureCaps caps_;
  std::uint64_t used_ = 0;
  std::uint64_t counter_ = 0;  // names the temporary files
};

}  // namespace vigil
