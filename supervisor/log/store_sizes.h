// What each change capture store holds, kept between runs: `<captures>/.sizes`, one line per
// settled store (its directory's identity and mtime, and the bytes of its files). Every
// command asks what the stores hold (capture_store_usage(), for the caps), and walking
// every store of every session at each launch made a cold `vigil run` slower with each
// session kept. A size stands for a store while the store directory's identity and mtime
// are the ones it was walked with (a file kept or removed moves the mtime: content_store.cc
// writes under a temporary name and renames). The file is a cache: a line that does not
// parse, or names what is not a store, is ignored, and a lost file costs one walk.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "supervisor/core/base/result.h"

namespace vigil {

struct StoreSize {
  std::uint64_t dev = 0, ino = 0;
  std::int64_t mtime_ns = 0;
  std::uint64_t bytes = 0;
  bool operator==(const StoreSize&) const = default;
};
using StoreSizes = std::map<std::string, StoreSize>;  // by store name

inline constexpr std::string_view kStoreSizesFile = ".sizes";
// Bigger than any file this writes for kMaxStateEntries stores of real names.
inline constexpr std::size_t kMaxStoreSizesBytes = 128u << 20;

// Pure: the file's text, and back ("v1" first; then "NAME DEV INO MTIME_NS BYTES" lines;
// a NAME is a store's: no '/', no whitespace, not "." or "..").
std::string format_store_sizes(const StoreSizes& sizes);
StoreSizes parse_store_sizes(std::string_view text);

// Read from / written to the captures directory `root_fd` (written whole under a
// temporary name, then renamed over the old one).
StoreSizes load_store_sizes(int root_fd);
Result<void> save_store_sizes(int root_fd, const StoreSizes& sizes);

}  // namespace vigil
