#include "supervisor/replay/undo_plan.h"

#include <algorithm>

#include "supervisor/replay/replay_changes.h"

namespace vigil::undo {
namespace {

std::string short_hash(const std::string& h) { return h.empty() ? "?" : h.substr(0, 12); }

std::string describe(const HostState& s) {
  if (s.type == "file") return "a file with sha256 " + short_hash(s.sha256);
  if (s.type == "symlink") return "a symlink to " + s.target;
  if (s.type == "dir") return "a directory";
  if (s.type == "absent") return "nothing";
  if (s.type == "unreachable") return "unreachable (" + s.why + ")";
  return "something else";
}

// The step that puts back what the path was before the session.
std::string restore_cannot(const changes::State& before) {
  if (before.type == "file" && !before.image.stored)
    return "its content was not kept: " + (before.image.note.empty() ? "not captured" : before.image.note);
  if (before.type == "file" || before.type == "symlink") return "";
  if (before.type == "existed") return "the log does not say what it was before the session";
  return "a " + before.type + " cannot be restored";
}

}  // namespace

const char* to_string(Op op) {
  switch (op) {
    case Op::kRemove:
      return "remove";
    case Op::kRemoveDir:
      return "remove directory";
    case Op::kRestore:
      return "restore";
    case Op::kMakeDir:
      return "make directory";
    case Op::kRenameBack:
      return "move back";
  }
  return "restore";
}

std::string mismatch(const std::optional<changes::State>& after, const HostState& now) {
  if (!after) return "the log does not say what it was after the session";
  const std::string& t = after->type;
  bool same = false;
  if (t == "absent") {
    same = now.type == "absent";
  } else if (t == "file") {
    same = now.type == "file" && !after->image.sha256.empty() && now.sha256 == after->image.sha256;
  } else if (t == "symlink") {
    same = now.type == "symlink" && now.target == after->image.target;
  } else if (t == "dir") {
    same = now.type == "dir";
  } else {
    return "the log does not say what it was after the session";
  }
  if (same) return "";
  return "changed on the host since the session: it is " + describe(now) + " now, the session left " +
         (t == "file" ? "a file with sha256 " + short_hash(after->image.sha256)
          : t == "symlink" ? "a symlink to " + after->image.target
          : t == "dir" ? std::string("a directory")
                       : std::string("nothing"));
}

std::vector<Step> plan_undo(const changes::ChangeSet& cs, const std::vector<std::string>& only,
                            const LookFn& look) {
  std::vector<Step> steps;
  for (const changes::PathChange& c : cs.paths) {
    if (!replay::selected(c, only)) continue;
    Step s;
    s.path = c.path;
    s.order = c.last_seq;
    s.conflict = mismatch(c.after, look(c.path));
    // Only what an allowed call of the session changed: an image alone (the sandbox's
    // vigil-init sends the pre ones) never makes undo write anywhere.
    if (c.steps.empty() && c.more_steps == 0) {
      s.op = Op::kRestore;
      s.cannot = "no allowed write of the session names it";
      steps.push_back(std::move(s));
      continue;
    }
    switch (c.net) {
      case changes::Net::kCreated:
        s.op = c.after && c.after->type == "dir" ? Op::kRemoveDir : Op::kRemove;
        steps.push_back(std::move(s));
        break;
      case changes::Net::kDeleted:
      case changes::Net::kModified:
        if (c.before->type == "dir") {
          s.op = Op::kMakeDir;
          s.want = *c.before;
        } else {
          s.op = Op::kRestore;
          s.want = *c.before;
          s.cannot = restore_cannot(*c.before);
        }
        steps.push_back(std::move(s));
        break;
      case changes::Net::kRenamed: {
        s.op = Op::kRenameBack;
        s.to = c.renamed_from;
        if (s.conflict.empty()) {
          const HostState there = look(c.renamed_from);
          if (there.type != "absent")
            s.conflict = "its old name " + c.renamed_from + " is taken on the host: " + describe(there);
        }
        // What the move left behind: the new name's own before, and the old name's
        // content if it was changed after the move.
        Step content;
        if (c.content_changed_after_rename) {
          content.op = Op::kRestore;
          content.path = c.renamed_from;
          content.want = *c.before;
          content.order = c.last_seq;
          content.cannot = restore_cannot(*c.before);
          content.conflict = s.conflict;
        }
        Step replaced;
        if (c.replaced && c.replaced_before) {
          replaced.path = c.path;
          replaced.order = c.last_seq;
          replaced.conflict = s.conflict;
          if (c.replaced_before->type == "dir") {
            replaced.op = Op::kMakeDir;
            replaced.want = *c.replaced_before;
          } else {
            replaced.op = Op::kRestore;
            replaced.want = *c.replaced_before;
            replaced.cannot = restore_cannot(*c.replaced_before);
          }
        }
        steps.push_back(std::move(s));
        // Same order: the stable sort below keeps them after the move.
        if (c.content_changed_after_rename) steps.push_back(std::move(content));
        if (c.replaced && c.replaced_before) steps.push_back(std::move(replaced));
        break;
      }
    }
  }
  std::stable_sort(steps.begin(), steps.end(),
                   [](const Step& a, const Step& b) { return a.order > b.order; });
  return steps;
}

}  // namespace vigil::undo
