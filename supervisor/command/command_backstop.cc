#include "supervisor/command/command_backstop.h"

#include <cstdlib>

#include "supervisor/core/base/diagnostics.h"
#include "supervisor/backstop/quarantine.h"
#include "supervisor/command/command_types.h"

namespace vigil {

std::vector<std::string> scanned_git_configs(const Plan& plan) {
  std::set<std::string> configs;
  for (const auto& op : plan.ops) {
    if (!op.origin.starts_with("mandatory: .git/")) continue;
    const auto git = op.path.rfind("/.git/");
    if (git != std::string::npos) configs.insert(op.path.substr(0, git) + "/.git/config");
  }
  return {configs.begin(), configs.end()};
}

void WrittenPaths::note(const events::FsWrite& w) {
  if (w.verdict != Verdict::kAllowed) return;
  if (w.resolved.empty() || w.resolved[0] != '/') {
    ++unnamed;
    return;
  }
  if (paths.size() < kMax) paths.insert(w.resolved);
  else ++over_cap;
  if (w.syscall.starts_with("rename")) {
    if (renamed_into.size() < kMax) renamed_into.insert(w.resolved);
    else ++over_cap;
  }
}

void run_backstop(const Policy& policy, const BackstopSnapshot& snap, WrittenPaths written,
                  const std::vector<std::string>& placeholders, const std::string& session_id,
                  CommandRecord& record) {
  BackstopInputs in;
  for (const auto& root : policy.fs.allow_write) {
    // A root that was no directory at launch mounted nothing: nothing to check there, and
    // no second warning about it (issue 38.3; the launch said it once).
    if (!root.session_temp && root.kind == PathKind::kDir) in.roots.push_back(root.resolved);
  }
  in.written.assign(written.paths.begin(), written.paths.end());
  in.renamed_into = std::move(written.renamed_into);
  in.skip.insert(placeholders.begin(), placeholders.end());
  const auto found = find_offenders(in, snap);
  if (written.unnamed != 0) {
    record.count("backstop.unnamed", written.unnamed);
    print_warning(std::to_string(written.unnamed) +
                  " allowed write(s) of the command had no name vigil could tell; the post-run "
                  "check covered them by its walk of the writable roots only");
  }
  if (written.over_cap != 0) record.count("backstop.records_over_cap", written.over_cap);
  if (!found.incomplete.empty()) {
    record.count("backstop.incomplete");
    print_warning("the post-run check of the writable roots " + found.incomplete);
  }
  if (found.offenders.empty()) return;
  auto dir = quarantine_dir_for(session_id, std::getenv("XDG_STATE_HOME"), std::getenv("HOME"));
  const auto moved = quarantine(found.offenders, dir ? *dir : std::string("/nonexistent"));
  for (const auto& q : moved) {
    events::FsQuarantine e;
    e.path = q.offender.path;
    e.rule = q.offender.rule;
    e.reason = q.offender.reason + (q.error.empty() ? "" : " (" + q.error + ")");
    e.moved_to = q.moved_to;
    e.removed = q.removed;
    e.restore = q.restore;
    record.count(q.moved_to.empty() ? "backstop.not_moved" : "backstop.quarantined");
    record.append(events::Source::kSupervisor, std::move(e));
  }
}

}  // namespace vigil
