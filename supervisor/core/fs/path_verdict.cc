#include "supervisor/core/fs/path_verdict.h"

#include <algorithm>
#include <set>

#include "supervisor/core/policy/path_expand.h"

namespace vigil {
namespace {

int depth_of(std::string_view path) {
  if (path == "/") return 0;
  return static_cast<int>(std::count(path.begin(), path.end(), '/'));
}

// At equal depth: hide first, then re-open, then writable, then deny-write, so that the
// more restrictive layer of the same path is applied last where srt says it wins.
int kind_rank(OpKind k) {
  switch (k) {
    case OpKind::kHide:
      return 0;
    case OpKind::kReopenRead:
      return 1;
    case OpKind::kWritable:
      return 2;
    case OpKind::kPin:
      return 3;
    case OpKind::kDenyWrite:
      return 4;
  }
  return 5;
}

void sort_ops(std::vector<PlanOp>* ops) {
  std::stable_sort(ops->begin(), ops->end(), [](const PlanOp& a, const PlanOp& b) {
    return mount_order_less(a.path, a.kind, b.path, b.kind);
  });
}

// The last op in `ops` that covers `path`, or nullptr for the base (--ro-bind / /).
const PlanOp* covering(const std::vector<PlanOp>& ops, std::string_view path) {
  const PlanOp* last = nullptr;
  for (const auto& op : ops) {
    if (path_is_under(path, op.path)) last = &op;
  }
  return last;
}

bool is_writable(const PlanOp* op) {
  return op != nullptr && (op->kind == OpKind::kWritable || op->kind == OpKind::kPin);
}
bool is_hidden(const PlanOp* op) { return op != nullptr && op->kind == OpKind::kHide; }

// The reason a write to a protected name is refused, with the one setting that lifts it
// where there is one (`git config user.name` writes .git/config).
std::string mandatory_why(const MandatoryDeny& d) {
  std::string why = "protected path: " + std::string(d.why);
  if (d.git_config) why += "; set filesystem.allowGitConfig: true to let git write it";
  return why;
}

}  // namespace

bool mount_order_less(std::string_view path_a, OpKind a, std::string_view path_b, OpKind b) {
  const int da = depth_of(path_a), db = depth_of(path_b);
  if (da != db) return da < db;
  return kind_rank(a) < kind_rank(b);
}

namespace {

// Every operation the settings and the protected names ask for, before any is weighed
// against another; what cannot be done (a missing source) is a note in `plan`.
std::vector<PlanOp> plan_candidates(const Policy& policy,
                                    std::span<const ProtectedPath> protected_paths, Plan* plan) {
  const auto& fs = policy.fs;
  std::vector<PlanOp> candidates;
  auto add = [&](OpKind kind, const PathRule& r, std::string why) {
    const DenyShape shape = r.kind == PathKind::kDir ? DenyShape::kDir : DenyShape::kFile;
    candidates.push_back(PlanOp{kind, r.resolved, r.origin, std::move(why), true, shape});
  };
  for (const auto& r : fs.deny_read) {
    // Nothing to hide; if the command creates it, it is the command's own file.
    if (r.kind == PathKind::kMissing) {
      plan->notes.push_back(r.origin + ": " + r.resolved + " does not exist; nothing to hide");
      continue;
    }
    add(OpKind::kHide, r, "hidden by denyRead");
  }
  for (const auto& r : fs.allow_read) {
    // A read-only bind needs a source: bwrap refuses to start on a missing one.
    if (r.kind == PathKind::kMissing) {
      plan->notes.push_back(r.origin + ": " + r.resolved + " does not exist; nothing to re-open");
      continue;
    }
    add(OpKind::kReopenRead, r, "re-opened for reading by allowRead");
  }
  for (const auto& r : fs.allow_write) {
    if (r.kind != PathKind::kDir) {
      plan->notes.push_back(
          r.origin + ": " + r.resolved +
          (r.kind == PathKind::kMissing ? " does not exist" : " is not a directory") + "; skipped");
      continue;
    }
    add(OpKind::kWritable, r, r.session_temp ? "the session's temp dir" : "writable root");
  }
  for (const auto& r : fs.deny_write) {
    if (r.kind == PathKind::kMissing && r.refuse_at_call) {
      // Its creation is refused at the call: the missing parents stay creatable, so
      // `mkdir config` and config/dev.json work beside a denied config/production.json.
      PlanOp op{OpKind::kDenyWrite, r.resolved, r.origin,
                "write-denied by denyWrite (it does not exist yet: creating it is refused)",
                false, DenyShape::kFile};
      op.at_call = true;
      candidates.push_back(std::move(op));
      continue;
    }
    if (r.kind == PathKind::kMissing) {
      // Block creation: a placeholder on the first missing component, or a read-only
      // bind of the file that stands where a directory would have to be.
      const bool whole = r.first_missing == r.resolved;
      candidates.push_back(PlanOp{OpKind::kDenyWrite, r.first_missing, r.origin,
                                  "write-denied by denyWrite", r.first_missing_exists,
                                  whole ? DenyShape::kFile : DenyShape::kDir});
      continue;
    }
    add(OpKind::kDenyWrite, r, "write-denied by denyWrite");
  }
  for (const auto& p : protected_paths) {
    if (p.rule == nullptr) continue;
    if (p.rule->git_config && fs.allow_git_config) continue;
    candidates.push_back(PlanOp{OpKind::kDenyWrite, lexically_normal(p.path),
                                "mandatory: " + std::string(p.rule->relpath),
                                mandatory_why(*p.rule), p.exists, p.shape});
  }
  return candidates;
}

void add_pins(Plan* plan) {
  // Pin every directory between a deny-write target and its writable root: a mount point
  // cannot be renamed, so `mv .git .git2 && mkdir .git` cannot step around the deny.
  std::vector<PlanOp> pins;
  std::set<std::string> pinned;
  for (const auto& op : plan->ops) {
    if (op.kind != OpKind::kDenyWrite || op.at_call) continue;
    std::vector<PlanOp> before(plan->ops.begin(), plan->ops.begin() + (&op - plan->ops.data()));
    const PlanOp* root = covering(before, op.path);
    if (!is_writable(root)) continue;
    std::string dir = op.path.substr(0, op.path.rfind('/'));
    while (dir.size() > root->path.size() && path_is_under(dir, root->path)) {
      if (pinned.insert(dir).second) {
        pins.push_back(PlanOp{OpKind::kPin, dir, op.origin,
                              "pinned so that " + op.path + " cannot be renamed away", true,
                              DenyShape::kDir});
      }
      dir = dir.substr(0, dir.rfind('/'));
    }
  }
  plan->ops.insert(plan->ops.end(), pins.begin(), pins.end());
}

}  // namespace

Plan build_plan(const Policy& policy, std::span<const ProtectedPath> protected_paths) {
  Plan plan;
  std::vector<PlanOp> candidates = plan_candidates(policy, protected_paths, &plan);
  sort_ops(&candidates);

  std::set<std::string> seen;  // (kind, path) already planned
  for (auto& op : candidates) {
    const std::string key = std::to_string(kind_rank(op.kind)) + op.path;
    if (!seen.insert(key).second) continue;
    const PlanOp* cur = covering(plan.ops, op.path);
    switch (op.kind) {
      case OpKind::kHide:
        if (is_hidden(cur)) {
          plan.notes.push_back(op.origin + ": already hidden by " + cur->origin);
          continue;
        }
        break;
      case OpKind::kReopenRead:
        if (!is_hidden(cur)) {
          plan.notes.push_back(op.origin + ": no effect, " + op.path +
                               " is not inside a denyRead region");
          continue;
        }
        break;
      case OpKind::kWritable: {
        // denyWrite and the mandatory denies win over allowWrite at any depth.
        const PlanOp* deny = nullptr;
        for (const auto& other : candidates) {
          if (other.kind == OpKind::kDenyWrite && path_is_under(op.path, other.path)) deny = &other;
        }
        if (deny != nullptr) {
          plan.notes.push_back(op.origin + ": no effect, " + op.path + " lies under " +
                               deny->origin + " (deny wins)");
          continue;
        }
        break;
      }
      case OpKind::kDenyWrite:
        if (is_hidden(cur)) {
          // Re-binding the host path would expose what denyRead hides; writes there
          // already land on a throwaway tmpfs.
          plan.notes.push_back(op.origin + ": " + op.path + " is inside " + cur->origin +
                               "; writes there are ephemeral");
          continue;
        }
        if (!is_writable(cur)) continue;  // already read-only: nothing to add
        break;
      case OpKind::kPin:
        break;
    }
    plan.ops.push_back(op);
  }

  add_pins(&plan);
  sort_ops(&plan.ops);
  return plan;
}

Decision decide(const Plan& plan, std::string_view raw_path, Access access) {
  const std::string path = lexically_normal(raw_path);
  const PlanOp* op = covering(plan.ops, path);
  if (op == nullptr) {
    if (access == Access::kRead) return {Verdict::kAllowed, "default", "reads are open by default"};
    return {Verdict::kDenied, "default",
            "outside the writable roots; add it to filesystem.allowWrite"};
  }
  const bool read = access == Access::kRead;
  switch (op->kind) {
    case OpKind::kHide:
      if (read) return {Verdict::kDenied, op->origin, "hidden by denyRead"};
      // A hidden directory is a tmpfs (writes vanish with the sandbox); a hidden file is
      // /dev/null mounted read-only, and nothing can be created below a file.
      if (op->shape == DenyShape::kDir) {
        return {Verdict::kEphemeral, op->origin,
                "inside a denyRead directory: writes land on a throwaway tmpfs"};
      }
      return {Verdict::kDenied, op->origin, "hidden by denyRead"};
    case OpKind::kReopenRead:
      if (read) return {Verdict::kAllowed, op->origin, "re-opened by allowRead"};
      return {Verdict::kDenied, op->origin,
              "read-only (re-opened by allowRead only); add it to filesystem.allowWrite"};
    case OpKind::kWritable:
    case OpKind::kPin:
      return {Verdict::kAllowed, op->origin, read ? "inside a writable root" : op->why};
    case OpKind::kDenyWrite:
      if (read) return {Verdict::kAllowed, op->origin, "write-protected but readable"};
      return {Verdict::kDenied, op->origin, op->why};
  }
  return {Verdict::kDenied, "internal", "unknown op"};
}

const char* to_string(OpKind k) {
  switch (k) {
    case OpKind::kHide:
      return "hide";
    case OpKind::kReopenRead:
      return "reopen-read";
    case OpKind::kWritable:
      return "writable";
    case OpKind::kPin:
      return "pin";
    case OpKind::kDenyWrite:
      return "deny-write";
  }
  return "?";
}

}  // namespace vigil
