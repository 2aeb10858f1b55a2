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
#include "supervisor/core/fs/host_scope.h"
#include "supervisor/log/session_log.h"  // capture_dir_for(): where a store is

namespace vigil {

struct CaptureStore {
  std::string root;  // <state>/vigil/captures: denied to every sandbox
  std::string dir;   // root/<id>: this session's store
  std::string id;
  UniqueFd fd;       // dir, opened O_RDONLY | O_DIRECTORY
};

// Creates (private) and opens the store of session `id`.
Result<CaptureStore> open_capture_store(const std::string& id);

// What one command may still keep: vigil.capture.maxSessionBytes less what this session's
// store holds (every earlier command of an agent session), and maxTotalBytes less what
// every store holds, whichever is less.
struct CaptureBudget {
  std::uint64_t left = UINT64_MAX;
  std::uint64_t session_used = 0;
  std::uint64_t all_used = 0;
  bool by_total = false;  // the total cap is the nearer one
};
CaptureBudget capture_budget(const CaptureStore& store, const CaptureCaps& caps);
// Pure: the same from the sizes.
CaptureBudget capture_budget_of(std::uint64_t session_used, std::uint64_t all_used,
                                const CaptureCaps& caps);

// The limit.reached record (limit "capture") for `n` files a cap left out.
events::LimitReached capture_cap_record(const CaptureBudget& budget, const CaptureCaps& caps,
                                        std::size_t n);

// The trees vigil-init takes no pre-images in: the scope's own trees with no writable
// root below them.
std::vector<std::string> capture_skip_trees(const HostScope& scope);

events::FsImage to_event(const std::string& phase, const std::string& path, const Image& img);

// The paths a command changed, from its records: those it wrote (allowed), the sources
// of its renames, and those vigil-init took a pre-image of. Bounded like the backstop's.
// Only names in the host scope (host_scope.h) are kept: a write to the sandbox's own
// /dev/shm/NAME must not have the supervisor read, and keep, the host's /dev/shm/NAME.
// No scope set: nothing is kept.
class ChangedPaths {
 public:
  static constexpr std::size_t kMax = 100'000;
  static constexpr std::size_t kSyncEvery = 1024;  // post-images per pack write, at most
  void set_scope(HostScope scope) { scope_ = std::move(scope); }
  // The post-images' pass reads for at most this long (each read is bounded by the caps).
  static constexpr std::chrono::milliseconds kBudget{3000};
  void note(const events::Body& body);
  // Takes the post-image of each path (after the command: nothing races it), keeping
  // content in `store` within its caps, and passes each record to `append`.
  // Returns how many were not kept for a cap of the session or of all stores.
  std::size_t take_post_images(ContentStore& store,
                               const std::function<void(events::FsImage)>& append) const;
  std::uint64_t pre_image_bytes() const { return pre_bytes_; }
  // Pre-images vigil-init did not keep for the session cap.
  std::size_t capped_pre_images() const { return capped_pre_; }

 private:
  HostScope scope_;
  std::set<std::string> paths_;
  std::uint64_t pre_bytes_ = 0;
  std::size_t capped_pre_ = 0;  // stored by vigil-init (counted once per content)
  std::set<std::string> pre_hashes_;
};

}  // namespace vigil
