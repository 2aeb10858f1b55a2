#include "supervisor/core/events/stored_content.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <optional>
#include <unordered_map>

#include "supervisor/core/base/sha256.h"
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/core/events/content_pack.h"

namespace vigil {
namespace {

using PackIndex = std::unordered_map<std::string, PackSpot>;

// The copy of `sha256` in one store: its own file (every store before packs, pre-images,
// large post-images), else an entry of a pack (content_pack.h). The packs' index is made
// on the first image that has no store file of its own.
StoredContent read_one(const std::string& dir, std::optional<PackIndex>* packs,
                       const events::FsImage& img, std::uint64_t max_bytes) {
  StoredContent c;
  std::string name = dir + "/" + img.sha256;
  std::uint64_t offset = 0;
  std::uint64_t size = max_bytes + 1;
  UniqueFd fd(::open(name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (!fd && errno == ENOENT) {
    if (!packs->has_value()) *packs = index_packs(dir);
    if (const auto at = (*packs)->find(img.sha256); at != (*packs)->end()) {
      name = dir + "/" + at->second.pack;
      offset = at->second.offset;
      size = std::min(size, at->second.size);
      fd = UniqueFd(::open(name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
    }
  }
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    c.why = "not in the store (" + name + ")";
    return c;
  }
  const auto in_file = static_cast<std::uint64_t>(st.st_size);
  size = std::min(size, in_file > offset ? in_file - offset : 0);
  std::string bytes(static_cast<std::size_t>(size), '\0');
  std::size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::pread(fd.get(), bytes.data() + got, bytes.size() - got,
                              static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  bytes.resize(got);
  // The store is private, but a copy that is not what its name says is never taken for
  // the session's content.
  if (sha256_hex(bytes) != img.sha256) {
    c.why = "the stored copy does not match its hash (" + name + ")";
    return c;
  }
  c.ok = true;
  c.bytes = std::move(bytes);
  return c;
}

}  // namespace

StoredContentFn stored_content_reader(std::vector<std::string> dirs, std::uint64_t max_bytes) {
  auto packs = std::make_shared<std::vector<std::optional<PackIndex>>>(dirs.size());
  return [dirs = std::move(dirs), packs, max_bytes](const events::FsImage& img) {
    StoredContent c;
    if (!img.stored) {
      c.why = img.note.empty() ? "not captured" : img.note;
      return c;
    }
    // The log names the content; a name that is not a SHA-256 ("../x") is never opened.
    const bool hex = img.sha256.size() == 64 &&
                     img.sha256.find_first_not_of("0123456789abcdef") == std::string::npos;
    if (!hex) {
      c.why = "the log names its content by something that is not a SHA-256";
      return c;
    }
    if (img.size > max_bytes) {
      c.why = "over " + std::to_string(max_bytes >> 20) + " MiB: too large to read back";
      return c;
    }
    if (dirs.empty()) {
      c.why = "not in the store (the session has no content store here)";
      return c;
    }
    // A mismatching copy is the answer's reason only if no store has a good one.
    std::string mismatch;
    for (std::size_t i = 0; i < dirs.size(); ++i) {
      StoredContent one = read_one(dirs[i], &(*packs)[i], img, max_bytes);
      if (one.ok) return one;
      if (mismatch.empty() && one.why.starts_with("the stored copy")) mismatch = one.why;
      if (c.why.empty()) c.why = one.why;
    }
    if (!mismatch.empty()) c.why = mismatch;
    else if (dirs.size() > 1) c.why = "not in any of the session's " + std::to_string(dirs.size()) + " stores (" + dirs.front() + ", ...)";
    return c;
  };
}

}  // namespace vigil
