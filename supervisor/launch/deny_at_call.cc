#include "supervisor/launch/deny_at_call.h"

#include <nlohmann/json.hpp>

#include "supervisor/core/policy/glob.h"
#include "supervisor/core/policy/path_expand.h"
#include "supervisor/core/wire/init_args.h"

namespace vigil {
std::string glob_origin(const GlobRule& g) {
  return g.origin + " " + nlohmann::json(g.written).dump();
}

std::vector<std::string> refuse_glob_args(const FilesystemPolicy& fs) {
  wire::InitArgs init;
  for (const auto* list : {&fs.deny_read_globs, &fs.deny_write_globs}) {
    for (const GlobRule& g : *list)
      init.refuse_glob.push_back({real_glob_pattern(g.pattern), glob_origin(g)});
  }
  return wire::option_args(init);
}

std::vector<std::string> glob_explain_lines(const FilesystemPolicy& fs, bool gatekeeper) {
  std::vector<std::string> out;
  auto say = [&](const GlobRule& g, const char* made) {
    std::string line = "glob " + g.origin + " " + nlohmann::json(g.pattern).dump() + ": " +
                       std::to_string(g.matches) + " existing match" +
                       (g.matches == 1 ? "" : "es") + " " + made +
                       " at launch by the mounts below (expanded at launch)";
    if (g.truncated) line += " (the walk hit its limit: not all)";
    line += gatekeeper ? "; a name it matches created later is refused by vigil-init at the "
                         "call (refused at the call)"
                       : "; a name created later is not covered: this kernel has no "
                         "gatekeeper (Linux 5.14+) to refuse it at the call";
    out.push_back(std::move(line));
  };
  for (const GlobRule& g : fs.deny_read_globs) say(g, "hidden");
  for (const GlobRule& g : fs.deny_write_globs) say(g, "read-only");
  return out;
}

std::vector<std::string> hidden_read_args(const Plan& plan) {
  wire::InitArgs init;
  for (const PlanOp& op : plan.ops) {
    if (op.kind == OpKind::kHide) init.reads.push_back({op.path, op.origin, true});
  }
  if (init.reads.empty()) return {};
  for (const PlanOp& op : plan.ops) {
    if (op.kind != OpKind::kReopenRead && op.kind != OpKind::kWritable) continue;
    bool below_hidden = false;
    for (const PlanOp& h : plan.ops) {
      below_hidden = below_hidden || (h.kind == OpKind::kHide && op.path != h.path &&
                                      path_is_under(op.path, h.path));
    }
    if (below_hidden) init.reads.push_back({op.path, op.origin, false});
  }
  return wire::option_args(init);
}

std::string reads_explain_line(bool reads, const Plan& plan) {
  if (!reads) return {};
  std::size_t hidden = 0;
  for (const PlanOp& op : plan.ops) hidden += op.kind == OpKind::kHide ? 1 : 0;
  if (hidden == 0)
    return "reads (vigil.observer.reads): nothing is hidden, so no read is trapped or told";
  return "reads (vigil.observer.reads): every open goes to vigil-init; a read of one of the " +
         std::to_string(hidden) + " hidden path" + (hidden == 1 ? "" : "s") +
         " is told (deny read PATH (hidden by denyRead, RULE)); stat calls are not";
}

bool confirm_hidden_read(events::FsRead* r, const Plan& plan) {
  const Decision d = decide(plan, r->resolved, Access::kRead);
  if (d.verdict != Verdict::kDenied) return false;
  r->reason = d.reason + ", " + d.rule;
  return true;
}

}  // namespace vigil
