#include "supervisor/command/spare_sandbox.h"

#include <cstdio>
#include <cstdlib>

namespace vigil {

std::vector<std::string> spare_identity_paths(const Plan& plan) {
  std::vector<std::string> out;
  for (const auto& op : plan.ops) {
    if (op.exists) out.push_back(op.path);
  }
  return out;
}

std::string spare_mismatch(const SpareShape& spare, const PreparedSandbox& fresh,
                           std::span<const ExpectedMount> identities_now) {
  const PreparedSandbox& was = spare.prepared;
  // Masked and denied variables are taken from the command's own environment, and the
  // spare's proxy was made before it was known: such a command is launched afresh.
  if (!fresh.policy.credentials.env_vars.empty() || fresh.policy.credentials.any_masked() ||
      fresh.policy.net.tls_terminate.enabled ||
      !fresh.policy.net.request_rules.empty()) {
    return "credentials or TLS termination are set up per command";
  }
  if (!(was.policy == fresh.policy)) return "the policy changed";
  if (!(was.protected_paths == fresh.protected_paths)) return "the protected names changed";
  if (!(was.plan == fresh.plan)) return "the plan changed";
  if (was.settings_origin != fresh.settings_origin) return "the settings file changed";
  if (was.warnings != fresh.warnings) return "the warnings changed";
  if (!std::equal(spare.identities.begin(), spare.identities.end(), identities_now.begin(),
                  identities_now.end())) {
    return "a mounted path was replaced";
  }
  return "";
}

Result<void> rename_capture_store(CaptureStore& store, const std::string& id) {
  auto dir = capture_dir_for(id, std::getenv("XDG_STATE_HOME"), std::getenv("HOME"));
  VIGIL_TRY(dir);
  if (std::rename(store.dir.c_str(), dir->c_str()) != 0)
    return system_error("cannot name the change store " + *dir);
  store.dir = *dir;
  return {};
}

std::vector<std::string> handed_environment(
    const std::optional<std::vector<std::string>>& base, const std::vector<std::string>& inherited,
    const std::vector<std::pair<std::string, std::string>>& set) {
  std::vector<std::string> env = base ? *base : inherited;
  for (const auto& [name, value] : set) {
    const std::string entry = name + "=" + value;
    bool replaced = false;
    for (auto& e : env) {
      if (e.size() > name.size() && e.compare(0, name.size(), name) == 0 && e[name.size()] == '=') {
        if (!replaced) e = entry;
        replaced = true;
      }
    }
    if (!replaced) env.push_back(entry);
  }
  return env;
}

}  // namespace vigil
