#include "supervisor/backstop/undo_plan.h"

#include <algorithm>

#include "supervisor/core/fs/host_scope.h"

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

// Only its times were set (touch, utimensat: git freshens an object it would write again
// that way) and the log never said what it was: there is nothing to put back (undo does
// not restore times), and nothing it could.
bool times_only(const changes::PathChange& c) {
  if (c.steps.empty() || c.more_steps != 0 || !c.before || c.before->type != "existed") return false;
  for (const changes::Step& s : c.steps)
    if (s.action != "touch") return false;
  return true;
}

bool normal_path(std::string_view p) {
  if (p.empty() || p[0] != '/' || (p.size() > 1 && p.back() == '/')) return false;
  if (p.find('\0') != std::string_view::npos) return false;
  for (std::size_t i = 1; i < p.size();) {
    const std::size_t j = std::min(p.find('/', i), p.size());
    const std::string_view part = p.substr(i, j - i);
    if (part.empty() || part == "." || part == "..") return false;
    i = j + 1;
  }
  return true;
}

const char* const kFixStore =
    "the content store was changed or pruned since the session (`vigil logs prune` removes "
    "stores with their logs): restore the path from a backup or version control, or undo "
    "fewer paths (vigil undo LOG PATH...)";
const char* const kFixConflict =
    "look at what is there now; `vigil undo --force` puts the session's before back over it, "
    "or undo fewer paths (vigil undo LOG PATH...)";

// Every reason a step cannot be carried out as planned ("" when it can).
void check_step(const Step& s, const changes::ChangeSet& cs, const LookFn& look,
                const CheckFn& check, bool force, Plan* plan) {
  for (const std::string* p : {&s.path, &s.to}) {
    if (p->empty()) continue;
    if (!normal_path(*p)) {
      plan->refused.push_back({*p, "the log names it with `.`, `..` or an empty component: "
                                   "not a name vigil writes, so the log is not to be trusted",
                               "check where the log came from (`vigil replay --verify LOG`)"});
      return;
    }
    if (!in_host_scope(cs.scope, *p)) {
      plan->refused.push_back({*p, "outside the session's writable roots: not a name the "
                                   "session could write on the host",
                               "undo only the paths inside them (vigil undo LOG PATH...)"});
      return;
    }
    // Every call of the executor reaches the name without following a symlink: one
    // planted on the way since would make it fail half-way, so it is refused here.
    if (const HostState now = look(*p); now.type == "unreachable") {
      plan->refused.push_back({*p, "cannot be reached: " + now.why,
                               "look at what was put on the way to it (a symlink planted in "
                               "the workspace since the session?) and remove it"});
      return;
    }
  }
  if (!s.cannot.empty()) {
    plan->refused.push_back({s.path, "cannot " + std::string(to_string(s.op)) + " it: " + s.cannot,
                             "undo the other paths (vigil undo LOG PATH...) and put this one "
                             "back by hand"});
    return;
  }
  if (!s.conflict.empty() && !force) {
    plan->refused.push_back({s.path, "CONFLICT: " + s.conflict, kFixConflict});
    return;
  }
  if (s.op == Op::kRestore && s.want.type == "file") {
    const std::string missing = check(s.want.image);
    if (!missing.empty()) {
      plan->refused.push_back({s.path, "its pre-image (sha256 " + short_hash(s.want.image.sha256) +
                                           ") cannot be read back: " + missing,
                               kFixStore});
    }
  }
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
    if (!changes::selected(c, only) || times_only(c)) continue;
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

std::string step_text(const Step& s) {
  return std::string(to_string(s.op)) + " " + s.path + (s.op == Op::kRenameBack ? " -> " + s.to : "");
}

Plan make_plan(const changes::ChangeSet& cs, const std::vector<std::string>& only,
               const LookFn& look, const CheckFn& check, bool force) {
  Plan plan;
  for (const changes::PathChange& c : cs.paths)
    if (changes::selected(c, only) && times_only(c)) ++plan.times_only;
  plan.steps = plan_undo(cs, only, look);
  for (const Step& s : plan.steps) check_step(s, cs, look, check, force, &plan);
  return plan;
}

}  // namespace vigil::undo
