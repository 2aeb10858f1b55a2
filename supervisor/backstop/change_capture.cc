#include "supervisor/backstop/change_capture.h"

#include <fcntl.h>

#include <chrono>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "supervisor/log/session_log.h"
#include "supervisor/log/state_size.h"

namespace vigil {

namespace {

// ContentStore's note for the session cap ("not captured: over 256 MiB for the session").
bool is_cap_note(const std::string& note) { return note.ends_with(" for the session"); }

}  // namespace

CaptureBudget capture_budget_of(std::uint64_t session_used, std::uint64_t all_used,
                                const CaptureCaps& caps) {
  CaptureBudget b;
  b.session_used = session_used;
  b.all_used = all_used;
  const std::uint64_t by_session =
      session_used >= caps.max_session_bytes ? 0 : caps.max_session_bytes - session_used;
  const std::uint64_t by_total =
      all_used >= caps.max_total_bytes ? 0 : caps.max_total_bytes - all_used;
  b.by_total = by_total < by_session;
  b.left = std::min(by_session, by_total);
  return b;
}

CaptureBudget capture_budget(const CaptureStore& store, const CaptureCaps& caps) {
  const CaptureUsage u = capture_store_usage(store.root, store.id);
  return capture_budget_of(u.session, u.all, caps);
}

events::LimitReached capture_cap_record(const CaptureBudget& budget, const CaptureCaps& caps,
                                        std::size_t n) {
  events::LimitReached l;
  l.limit = "capture";
  const std::string files = std::to_string(n) + " changed file(s) were not captured, so `vigil undo` "
                            "cannot restore them";
  if (budget.by_total) {
    l.detail = "the change stores hold " + cap_text(budget.all_used) + " of their " +
               cap_text(caps.max_total_bytes) + " cap (vigil.capture.maxTotalBytes): " + files +
               "; `vigil logs prune` removes old logs with their stores";
  } else {
    l.detail = "this session's change store reached its " + cap_text(caps.max_session_bytes) +
               " cap (vigil.capture.maxSessionBytes): " + files;
  }
  return l;
}

std::vector<std::string> capture_skip_trees(const HostScope& scope) {
  std::vector<std::string> out;
  for (const std::string& own : scope.sandbox_own) {
    bool writable_below = false;
    for (const std::string& w : scope.writable)
      if (w != own && path_within(w, own)) writable_below = true;
    if (!writable_below) out.push_back(own);
  }
  return out;
}

Result<CaptureStore> open_capture_store(const std::string& id) {
  auto dir = capture_dir_for(id, std::getenv("XDG_STATE_HOME"), std::getenv("HOME"));
  if (!dir) return std::move(dir).error();
  // The same checks as the log's directory: every component ours, the last two private.
  if (auto r = prepare_log_dir(*dir + "/store"); !r) return std::move(r).error();
  CaptureStore s;
  s.dir = *dir;
  s.root = dir->substr(0, dir->rfind('/'));
  s.id = id;
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
    if (paths_.size() < kMax && in_host_scope(scope_, p)) paths_.insert(p);
  };
  if (const auto* w = std::get_if<events::FsWrite>(&body)) {
    // A call that failed changed nothing; one in a session-only mount is gone already.
    if (w->verdict != Verdict::kAllowed || (!w->result.empty() && w->result != "0"))
      return;
    add(w->resolved);
    if (w->syscall.starts_with("rename")) add(w->from_resolved);
  } else if (const auto* i = std::get_if<events::FsImage>(&body)) {
    add(i->path);
    if (!i->stored && is_cap_note(i->note)) ++capped_pre_;
    if (i->stored && pre_hashes_.insert(i->sha256).second) pre_bytes_ += i->size;
  }
}

std::size_t ChangedPaths::take_post_images(ContentStore& store,
                                           const std::function<void(events::FsImage)>& append) const {
  std::size_t capped = 0;
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
    if (!img.stored && is_cap_note(img.note)) ++capped;
    waiting.emplace_back(to_event("post", p, img), img.packed);
    if (waiting.size() >= kSyncEvery) release();
  }
  release();
  return capped;
}

}  // namespace vigil
