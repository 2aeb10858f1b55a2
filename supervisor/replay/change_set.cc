#include "supervisor/replay/change_set.h"

#include <linux/fs.h>

#include <algorithm>
#include <set>
#include <variant>

#include "supervisor/replay/replay_rows.h"

namespace vigil::changes {
namespace {

bool succeeded(const events::FsWrite& w) {
  // "" : a log from before vigil-init performed calls, or a witnessed call (best-effort
  // kernels): it was allowed, and what it did shows in the images.
  return w.verdict == Verdict::kAllowed && (w.result.empty() || w.result == "0");
}

bool same(const State& a, const State& b) {
  if (a.type != b.type) return false;
  if (a.type == "dir" || a.type == "absent") return true;
  if (!a.has_image()) return false;  // "existed": nothing to compare
  const events::FsImage& x = a.image;
  const events::FsImage& y = b.image;
  return !x.sha256.empty() == !y.sha256.empty() && x.sha256 == y.sha256 && x.size == y.size &&
         x.mode == y.mode && x.uid == y.uid && x.gid == y.gid && x.target == y.target;
}

// What the log says a path is after the session: its last post image, else what its
// write records left there.
std::optional<State> final_state(const std::optional<events::FsImage>& post, const std::string& sim,
                                 bool capture_seen) {
  if (post) return State{post->type, *post};
  if (sim.empty()) return std::nullopt;
  if (sim == "absent" || sim == "dir" || sim == "other") return State{sim, {}};
  // With capture on, every changed path that is still there gets a post image except a
  // directory (or a FIFO, a socket): no image means it is one of those.
  return State{capture_seen ? "dir" : "existed", {}};
}

}  // namespace

ChangeSetBuilder::Track* ChangeSetBuilder::track(const std::string& path) {
  if (path.empty() || path[0] != '/') return nullptr;
  auto it = tracks_.find(path);
  if (it != tracks_.end()) return &it->second;
  // A name the sandbox could not write on the host (its own /dev/shm, /proc, temp dir):
  // never the host's file of that name, so never shown, diffed or undone as one.
  if (!in_host_scope(scope_, path)) {
    if (sandbox_only_.size() < kMaxPaths) sandbox_only_.insert(path);
    return nullptr;
  }
  if (tracks_.size() >= kMaxPaths) {
    ++unlisted_;
    return nullptr;
  }
  return &tracks_[path];
}

void ChangeSetBuilder::add_step(Track* t, const events::Event& e, const events::FsWrite& w,
                                std::string other) {
  t->last_seq = e.seq;
  if (t->steps.size() >= kMaxSteps || all_steps_ >= kMaxAllSteps) {
    ++t->more_steps;
    return;
  }
  ++all_steps_;
  Step s;
  s.seq = e.seq;
  s.t = e.t;
  s.cmd = e.cmd;
  s.pid = w.pid;
  auto it = argv_.find({e.cmd.value_or(0), w.pid});
  if (it != argv_.end()) s.argv = it->second;
  s.action = replay::write_action(w);
  s.syscall = w.syscall;
  s.other = std::move(other);
  t->steps.push_back(std::move(s));
}

void ChangeSetBuilder::take(const events::Event& e) {
  if (session_.empty()) session_ = e.session;
  if (const auto* s = std::get_if<events::SessionStart>(&e.body)) {
    if (s->scope) {
      scope_ = *s->scope;
      scope_recorded_ = true;
    }
    return;
  }
  if (const auto* p = std::get_if<events::ProcExec>(&e.body)) {
    if (argv_.size() >= kMaxNamedProcesses) argv_.clear();
    argv_[{e.cmd.value_or(0), p->pid}] =
        std::make_shared<const std::string>(replay::join_argv(p->argv));
  } else if (const auto* i = std::get_if<events::FsImage>(&e.body)) {
    capture_seen_ = true;
    Track* t = track(i->path);
    if (t == nullptr) return;
    if (i->best_effort) t->best_effort = true;
    if (i->phase == "pre") {
      // The first record of a path decides its before; a later pre image is of a
      // later moment (a second command's first change, a file made in the session).
      if (!t->before) t->before = State{i->type, *i};
    } else {
      t->post = *i;
    }
  } else if (const auto* w = std::get_if<events::FsWrite>(&e.body)) {
    if (succeeded(*w)) on_write(e, *w);
  }
}

void ChangeSetBuilder::on_write(const events::Event& e, const events::FsWrite& w) {
  const std::string action = replay::write_action(w);
  if (action == "rename") {
    Track* src = track(w.from_resolved);
    Track* dst = track(w.resolved);
    if (dst == nullptr) return;
    if (src == nullptr) {
      // From a name that is not the host's (or not followed) onto one that is: for the
      // host, a new thing appeared at `dst` (a replaced name had its pre image taken).
      if (!dst->before) dst->before = State{"absent", {}};
      dst->sim = "file";
      dst->origin = "";
      dst->changed_since_move = true;
      add_step(dst, e, w, "from " + w.from_resolved);
      return;
    }
    const bool exchange = (w.flags & RENAME_EXCHANGE) != 0;
    // A rename's source was there; its target was absent unless a pre image said
    // otherwise (vigil-init takes one of a name a rename replaces).
    if (!src->before) src->before = State{"existed", {}};
    if (!dst->before) dst->before = State{exchange ? "existed" : "absent", {}};
    std::optional<std::string> moved =
        src->origin ? *src->origin : std::optional<std::string>(w.from_resolved);
    std::string sim = src->sim.empty() ? "existed" : src->sim;
    const bool changed = src->changed_since_move;
    if (exchange) {
      src->origin = dst->origin ? *dst->origin : w.resolved;
      src->sim = dst->sim.empty() ? "existed" : dst->sim;
      src->changed_since_move = dst->changed_since_move;
    } else {
      src->origin = "";
      src->sim = "absent";
      src->changed_since_move = false;
    }
    dst->origin = std::move(moved);
    dst->sim = std::move(sim);
    dst->changed_since_move = changed;
    add_step(src, e, w, "to " + w.resolved);
    add_step(dst, e, w, "from " + w.from_resolved);
    return;
  }
  Track* t = track(w.resolved);
  if (t == nullptr) return;
  const bool makes = action == "mkdir" || action == "mknod" || action == "symlink" ||
                     action == "link";
  if (!t->before) {
    // No pre image came first: a create made a new name (an existing file would have
    // had its pre image taken), an rmdir removed a directory (they have no images).
    if (action == "create" || makes) {
      t->before = State{"absent", {}};
    } else if (action == "rmdir") {
      t->before = State{"dir", {}};
    } else {
      t->before = State{"existed", {}};
    }
  }
  const bool was_absent = t->sim == "absent" || (t->sim.empty() && !t->before->present());
  if (action == "delete" || action == "rmdir") {
    t->sim = "absent";
    t->origin = "";
    t->changed_since_move = false;
  } else if (makes || (action == "create" && was_absent)) {
    t->sim = action == "mkdir" ? "dir" : action == "symlink" ? "symlink" : "file";
    t->origin = "";
    t->changed_since_move = false;
  } else {
    if (t->sim.empty()) t->sim = t->before->type == "absent" ? "file" : t->before->type;
    t->changed_since_move = true;
  }
  std::string other;
  if (action == "symlink") other = "-> " + w.from;
  if (action == "link") other = "from " + (w.from_resolved.empty() ? w.from : w.from_resolved);
  add_step(t, e, w, std::move(other));
}

ChangeSet ChangeSetBuilder::finish() const {
  ChangeSet cs;
  cs.capture_seen = capture_seen_;
  cs.session = session_;
  cs.unlisted_paths = unlisted_;
  cs.sandbox_only = sandbox_only_.size();
  cs.scope = scope_;
  cs.scope_recorded = scope_recorded_;
  // First the renames: a path whose pre-session thing was moved to another name that
  // still holds it is listed once, under its new name.
  std::map<std::string, std::string> renamed_to;  // old name -> new name
  for (const auto& [path, t] : tracks_) {
    if (!t.origin || t.origin->empty() || *t.origin == path) continue;
    auto from = tracks_.find(*t.origin);
    if (from == tracks_.end() || !from->second.before || !from->second.before->present()) continue;
    const auto gone = final_state(from->second.post, from->second.sim, capture_seen_);
    const auto here = final_state(t.post, t.sim, capture_seen_);
    if (gone && !gone->present() && here && here->present()) renamed_to[*t.origin] = path;
  }
  std::set<std::string> consumed;
  for (const auto& [from, to] : renamed_to) consumed.insert(from);
  for (const auto& [path, t] : tracks_) {
    if (consumed.count(path) != 0) continue;
    PathChange c;
    c.path = path;
    c.before = t.before ? t.before : std::optional<State>(State{"existed", {}});
    c.after = final_state(t.post, t.sim, capture_seen_);
    c.steps = t.steps;
    c.more_steps = t.more_steps;
    c.last_seq = t.last_seq;
    c.best_effort = t.best_effort;
    const bool b = c.before->present();
    const bool a = !c.after || c.after->present();
    const std::string from = t.origin && renamed_to.count(*t.origin) != 0 &&
                                     renamed_to.at(*t.origin) == path
                                 ? *t.origin
                                 : std::string();
    if (!from.empty()) {
      const Track& old = tracks_.at(from);
      c.net = Net::kRenamed;
      c.renamed_from = from;
      c.replaced = b;
      if (b) c.replaced_before = c.before;
      c.content_changed_after_rename = t.changed_since_move;
      // The old name's steps come first: one story, in log order.
      std::vector<Step> all = old.steps;
      all.insert(all.end(), t.steps.begin(), t.steps.end());
      std::stable_sort(all.begin(), all.end(),
                       [](const Step& x, const Step& y) { return x.seq < y.seq; });
      // The move itself is a step of both names: told once, from the new name's side.
      std::vector<Step> story;
      for (std::size_t i = 0; i < all.size(); ++i) {
        if (i + 1 < all.size() && all[i + 1].seq == all[i].seq) continue;
        story.push_back(std::move(all[i]));
      }
      if (story.size() > kMaxSteps) {
        c.more_steps += story.size() - kMaxSteps;
        story.resize(kMaxSteps);
      }
      c.more_steps += old.more_steps;
      all = std::move(story);
      c.steps = std::move(all);
      c.best_effort = c.best_effort || old.best_effort;
      // The before of a rename is the old name's; moved unchanged, it is what the new
      // name holds now.
      State was = *old.before;
      if (!was.has_image() && !t.changed_since_move && c.after && c.after->has_image()) {
        was = *c.after;
        was.image.path = from;
      }
      c.before = was;
      cs.paths.push_back(std::move(c));
      continue;
    }
    if (!b && !a) {
      ++cs.temporary;
      continue;
    }
    // Written through, not changed: a device or a FIFO (/dev/null) opened for writing.
    if (c.before->type == "other" && c.after && c.after->type == "other") {
      ++cs.unchanged;
      continue;
    }
    if (!b) {
      c.net = Net::kCreated;
    } else if (!a) {
      c.net = Net::kDeleted;
    } else if (c.after && same(*c.before, *c.after)) {
      ++cs.unchanged;
      continue;
    } else {
      c.net = Net::kModified;
    }
    cs.paths.push_back(std::move(c));
  }
  return cs;
}

}  // namespace vigil::changes
