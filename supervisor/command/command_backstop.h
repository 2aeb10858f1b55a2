// The backstop's part in one command (backstop.h, quarantine.h): what the records say the
// command wrote, gathered while it runs, and the check after the sandbox is gone that
// moves what breaks the rules into the quarantine.
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "supervisor/core/events/event_schema.h"
#include "supervisor/core/fs/path_verdict.h"
#include "supervisor/core/policy/policy.h"
#include "supervisor/backstop/backstop.h"

namespace vigil {

class CommandRecord;

// The configs of the repositories the mandatory scan found (each ".git" its rules capped),
// whose unsafe keys at launch the backstop must leave alone.
std::vector<std::string> scanned_git_configs(const Plan& plan);

// What the session's records say it wrote, for the backstop. Bounded: past the cap the
// walk alone covers the rest.
struct WrittenPaths {
  static constexpr std::size_t kMax = 100'000;
  std::set<std::string> paths;
  std::set<std::string> renamed_into;
  // Allowed writes whose name vigil could not tell (empty, not absolute) or past the cap:
  // never dropped silently, they are reported, and the walk alone covers them.
  std::size_t unnamed = 0;
  std::size_t over_cap = 0;
  void note(const events::FsWrite& w);
};

// After the sandbox is gone: finds what the command left that breaks the rules
// (backstop.h), moves it into the quarantine and logs each as fs.quarantine.
void run_backstop(const Policy& policy, const BackstopSnapshot& snap, WrittenPaths written,
                  const std::vector<std::string>& placeholders, const std::string& session_id,
                  CommandRecord& record);

}  // namespace vigil
