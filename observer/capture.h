// Pre-images: what a file was before the command first changed it. vigil-init calls
// keep() just before it performs a call that changes or removes an existing name (an
// open for writing, unlink, rename over it, truncate): the file's content goes into the
// session's content store (supervisor/core/events/content_store.h) through the directory fd the
// supervisor passed in, and one fs.image line (phase "pre") says what it was. Once per
// path for the life of this vigil-init (one command).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "supervisor/core/events/content_store.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil::init {

class Capture {
 public:
  // `best_effort`: opens are witnessed, not performed (no gatekeeper on this kernel):
  // the file may change between the image and the open, and each record says so.
  Capture(UniqueFd store, CaptureCaps caps, bool best_effort)
      : store_fd_(std::move(store)), store_(store_fd_.get(), caps), best_effort_(best_effort) {}

  // What `rest` under `dir` names now ("" : `dir` itself), resolved as the call will
  // resolve it (RESOLVE_NO_MAGICLINKS plus the call's `resolve`; a final symlink
  // followed when `follow`). Appends an fs.image line to `out` the first time a path is
  // seen; nothing for a name that does not exist or is a directory.
  void keep(int dir, const std::string& rest, std::uint64_t resolve, bool follow, std::string* out);
  // The same for a file the gatekeeper has just opened (`fd`, any access mode) under its
  // real `name`: a name seen before costs nothing (no lookup, no syscall).
  void keep_opened(int fd, const std::string& name, std::string* out);
  // Trees of the sandbox's own (its /dev/shm, its temp dir): their files are not the
  // host's and are gone after the session, so they are neither imaged nor stored.
  void skip_below(std::vector<std::string> trees) { skip_ = std::move(trees); }

 private:
  UniqueFd store_fd_;
  ContentStore store_;
  bool best_effort_;
  std::set<std::string> seen_;
  std::vector<std::string> skip_;
};

// The fs.image line of `img` (pure; exposed for the tests).
void append_image_line(std::string* out, const std::string& phase, const std::string& path,
                       const Image& img, bool best_effort);

}  // namespace vigil::init
