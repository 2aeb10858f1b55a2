// The supervisor's half of change capture (pre-images: observer/capture.h). Before the
// command: the session's content store, <state>/vigil/captures/<id>/ (private, created
// like the log's directory), opened for vigil-init as a directory fd, the whole
// <state>/vigil/captures hidden from the sandbox (a denyRead entry: no command reads
// another session's pre-images, or writes its own). After it: post-images, the state of
// every path the command changed, taken on the host and logged as fs.image "post".
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <set>
#include <string>

#include "supervisor/core/events/content_store.h"
#include "supervisor/core/base/result.h"
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/core/events/event_schema.h"
#include "supervisor/log/session_log.h"  // capture_dir_for(): where a store is

namespace vigil {

struct CaptureStore {
  std::string root;  // <state>/vigil/captures: denied to every sandbox
  std::string dir;   // root/<id>: this session's store
  UniqueFd fd;       // dir, opened O_RDONLY | O_DIRECTORY
};

// Creates (private) and opens the store of session `id`.
Result<CaptureStore> open_capture_store(const std::string& id);

events::FsImage to_event(const std::string& phase, const std::string& path, const Image& img);

// The paths a command changed, from its records: those it wrote (allowed), the sources
// of its renames, and those vigil-init took a pre-image of. Bounded like the backstop's.
class ChangedPaths {
 public:
  static constexpr std::size_t kMax = 100'000;
  static constexpr std::size_t kSyncEvery = 1024;  // post-images per pack write, at most
  // The post-images' pass reads for at most this long (each read is bounded by the caps).
  static constexpr std::chrono::milliseconds kBudget{3000};
  void note(const events::Body& body);
  // Takes the post-image of each path (after the command: nothing races it), keeping
  // content in `store` within its caps, and passes each record to `append`.
  void take_post_images(ContentStore& store,
                        const std::function<void(events::FsImage)>& append) const;
  std::uint64_t pre_image_bytes() const { return pre_bytes_; }

 private:
  std::set<std::string> paths_;
  std::uint64_t pre_bytes_ = 0;  // stored by vigil-init (counted once per content)
  std::set<std::string> pre_hashes_;
};

}  // namespace vigil
