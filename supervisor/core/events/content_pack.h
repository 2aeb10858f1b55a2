// Packs: many images of a content store in one file (issue 17, capture cost). A
// post-image pass used to make one store file per image (a temporary, then a rename to
// its hash); on ext4 the inode each one allocates was most of the pass (perf: 64% in
// openat's ext4_create, 12% in the rename and the existence check). A pass now appends
// the content of small files to one pack of its own, with large writes.
//
// Layout of a pack ("pack.<pid>.<ns>.<n>" beside the per-file images, which stay: the
// pre-images, the large post-images and every store written before packs):
//   "vigil-pack 1\n", then entries of
//   32 bytes SHA-256 | 8 bytes little-endian size | the bytes.
// Self-describing: a reader indexes a pack by walking its entry headers. A header is
// written with an all-ones size first and patched when the entry is whole, so an entry
// torn by a crash stops the walk (its size runs past the end) instead of being read.
// Readers check every entry's bytes against the hash the log names before showing them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "supervisor/core/base/sha256.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil {

inline constexpr char kPackMagic[] = "vigil-pack 1\n";
inline constexpr std::size_t kPackMagicSize = sizeof kPackMagic - 1;
inline constexpr std::size_t kPackEntryHeader = 32 + 8;

// Appends entries to a new pack in one store directory, through a buffer.
class PackWriter {
 public:
  explicit PackWriter(int store_dir) : dir_(store_dir) {}

  // Copies `from` (from its start) into a new entry, at most `limit` bytes and one more
  // (a result past `limit` says there was more: the caller drops the entry); `digest`:
  // its SHA-256. The bytes copied, or -1 with errno (the entry is dropped). The pack is
  // made on the first call.
  long long append(int from, Sha256::Digest* digest, std::uint64_t limit = UINT64_MAX - 1);
  // Takes back the entry append() just added (its bytes were in the store already).
  void drop_last();
  // Writes what is buffered. 0, or the errno of the first write that failed (every entry
  // since the last successful sync() may then be missing).
  int sync();
  const std::string& name() const { return name_; }

 private:
  int open_pack();
  int flush();  // buffered bytes to the file; 0 or errno

  int dir_;
  UniqueFd fd_;
  std::string name_;
  // Bytes not yet written, which start at file offset end_ (a plain array: a file is
  // read straight into it, and nothing clears it first).
  std::unique_ptr<char[]> buf_;
  std::size_t len_ = 0;
  std::uint64_t end_ = 0;    // bytes in the file
  std::uint64_t last_ = 0;   // the last entry's header offset
  int failed_ = 0;           // a write failed: nothing more is appended
};

// Where a pack holds one content.
struct PackSpot {
  std::string pack;  // the pack's name in the store directory
  std::uint64_t offset = 0;  // of the bytes
  std::uint64_t size = 0;
};
// Every whole entry of every pack in store directory `dir`, by hex SHA-256 (empty when
// there is no such directory or no pack).
std::unordered_map<std::string, PackSpot> index_packs(const std::string& dir);

}  // namespace vigil
