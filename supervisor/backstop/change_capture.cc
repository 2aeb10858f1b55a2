#include "supervisor/backstop/change_capture.h"

#include <fcntl.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "supervisor/log/session_log.h"

namespace vigil {

Result<CaptureStore> open_capture_store(const std::string& id) {
  auto dir = capture_dir_for(id, std::getenv("XDG_STATE_HOME"), std::getenv("HOME"));
  if (!dir) return std::move(dir).error();
  // The same checks as the log's directory: every component ours, the last two private.
  if (auto r = prepare_log_dir(*dir + "/store"); !r) return std::move(r).error();
  CaptureStore s;
  s.dir = *dir;
  s.root = dir->substr(0, dir->rfind('/'));
  s.fd = UniqueFd(::open(s.dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!s.fd) return system_error("cannot open the change store " + s.dir);
  return s;
}

events::FsImage to_event(const std::string& phase, const std::string& path, const Image& img) {
  events::FsImage e;
  e.phase = phase;
  e.path = path;
  e.type = to_string(img.type);
  e.size = img.size;
  e.mode = img.mode;
  e.uid = img.uid;
  e.gid = img.gid;
  e.sha256 = img.sha256;
  e.target = img.target;
  e.stored = img.stored;
  e.note = img.note;
  return e;
}

void ChangedPaths::note(const events::Body& body) {
  auto add = [&](const std::string& p) {
    if (!p.empty() && p[0] == '/' && paths_.size() < kMax) paths_.insert(p);
  };
  if (const auto* w = std::get_if<events::FsWrite>(&body)) {
    // A call that failed changed nothing; one in a session-only mount is gone already.
    if (w->verdict != Verdict::kAllowed || (!w->result.empty() && w->result != "0"))
      return;
    add(w->resolved);
    if (w->syscall.starts_with("rename")) add(w->from_resolved);
  } else if (const auto* i = std::get_if<events::FsImage>(&body)) {
    add(i->path);
    if (i->stored && pre_hashes_.insert(i->sha256).second) pre_bytes_ += i->size;
  }
}

void ChangedPaths::take_post_images(ContentStore& store,
                                    const std::function<void(events::FsImage)>& append) const {
  // Small files' content goes into one pack (content_pack.h): an image is logged as
  // stored only once the pack's bytes are written, so records wait for each sync.
  store.use_pack();
  std::vector<std::pair<events::FsImage, bool>> waiting;  // the record, packed
  auto release = [&] {
    const int failed = store.sync_pack();
    for (auto& [e, packed] : waiting) {
      if (failed != 0 && packed) {
        e.stored = false;
        e.note = std::string("not captured: the store refused it (") +
                 (::strerrorname_np(failed) != nullptr ? ::strerrorname_np(failed) : "EIO") + ")";
      }
      append(std::move(e));
    }
    waiting.clear();
  };
  // Each read is bounded by the caps (content_store.h); the whole pass by time too: past
  // the budget the rest are described (type, size, owner) without a read.
  const auto deadline = std::chrono::steady_clock::now() + kBudget;
  ContentStore described(-1, CaptureCaps{0, 0});
  bool late = false;
  for (const std::string& p : paths_) {
    late = late || std::chrono::steady_clock::now() > deadline;
    Image img = (late ? described : store).take_image_at(AT_FDCWD, p.c_str());
    if (late && img.type == Image::Type::kFile) {
      img.sha256.clear();
      img.note = "not captured: past the post-run time budget";
    }
    // A directory, a FIFO: no post image (a directory's content is its entries, each
    // with images of its own).
    if ((img.type == Image::Type::kOther || img.type == Image::Type::kDir) && img.note.empty())
      continue;
    waiting.emplace_back(to_event("post", p, img), img.packed);
    if (waiting.size() >= kSyncEvery) release();
  }
  release();
}

}  // namespace vigil
