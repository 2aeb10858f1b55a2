#include "supervisor/launch/write_at_call.h"

#include <sys/stat.h>

#include <string>

#include "observer/git_rules.h"
#include "observer/protected_names.h"
#include "observer/refused_names.h"
#include "supervisor/core/policy/glob.h"
#include "supervisor/launch/deny_at_call.h"

namespace vigil {

std::vector<init::Mount> mounts_of_plan(const Plan& plan) {
  std::vector<init::Mount> out;
  auto mount = [&](const std::string& at, std::string root, const char* fstype, bool ro) {
    out.push_back(init::Mount{at, std::move(root), fstype, "", ro, ""});
  };
  mount("/", "/", "ext4", true);
  for (const PlanOp& op : plan.ops) {
    switch (op.kind) {
      case OpKind::kHide:
        if (op.shape == DenyShape::kDir) {
          mount(op.path, "/", "tmpfs", false);
        } else {
          mount(op.path, "/null", "devtmpfs", true);
        }
        break;
      case OpKind::kReopenRead:
        mount(op.path, op.path, "ext4", true);
        break;
      case OpKind::kWritable:
      case OpKind::kPin:
        mount(op.path, op.path, "ext4", false);
        break;
      case OpKind::kDenyWrite:
        if (op.at_call) break;  // no mount: refused at the call (refused_names.h)
        if (!op.exists && op.shape == DenyShape::kFile) {
          mount(op.path, "/null", "devtmpfs", true);
        } else {
          mount(op.path, op.path, "ext4", true);
        }
        break;
    }
  }
  return out;
}

Decision write_verdict(const Plan& plan, const FilesystemPolicy& fs, std::string_view path,
                       bool gatekeeper) {
  Decision d = decide(plan, path, Access::kWrite);
  if (d.verdict != Verdict::kAllowed || !gatekeeper) return d;
  // vigil-init's gate judges a name when a call would create it (an existing file is
  // opened without O_CREAT first: observer/emulate_open.cc), and a change to an existing
  // one only for the names git gives a meaning to (observer/git_rules.h): so here too.
  struct stat st {};
  if (::lstat(std::string(path).c_str(), &st) == 0 && !init::git_may_judge_change(path)) return d;
  // As vigil-init's gate (observer/notify_loop.cc), in its order: protected names, missing
  // denyWrite targets (the plan's at_call ops: decide() has already refused those), deny
  // globs. The call is a create: the strictest kind, what "may this be written" asks.
  const std::string name(path);
  std::string why = init::protected_name_refusal(mounts_of_plan(plan), name);
  if (why.empty()) {
    std::vector<init::RefusedGlob> globs;
    for (const auto* list : {&fs.deny_read_globs, &fs.deny_write_globs}) {
      for (const GlobRule& g : *list)
        globs.push_back({real_glob_pattern(g.pattern), glob_origin(g)});
    }
    why = init::refused_glob_refusal(globs, name);
  }
  if (why.empty()) return d;
  return {Verdict::kDenied, "at the call (vigil-init)", why};
}

}  // namespace vigil
