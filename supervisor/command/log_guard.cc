#include "supervisor/command/log_guard.h"

#include "supervisor/core/policy/path_expand.h"

namespace vigil {

std::optional<LogGuard> log_guard(const Plan& plan, const std::vector<PathRule>& allow_write,
                                  std::string_view log_file) {
  const std::size_t slash = log_file.rfind('/');
  const std::string log_dir(slash == 0 ? std::string_view("/") : log_file.substr(0, slash));
  if (decide(plan, log_dir, Access::kWrite).verdict == Verdict::kDenied) return std::nullopt;
  bool holds_root = false;
  for (const auto& root : allow_write) {
    holds_root = holds_root || path_is_under(root.resolved, log_dir);
  }
  if (holds_root) return LogGuard{std::string(log_file), false};
  return LogGuard{log_dir, true};
}

PathRule log_guard_rule(const LogGuard& guard) {
  PathRule r;
  r.written = r.literal = r.resolved = guard.path;
  r.origin = "session log";
  r.kind = guard.is_dir ? PathKind::kDir : PathKind::kFile;
  return r;
}

}  // namespace vigil
