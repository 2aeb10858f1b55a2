#include "seatbelt/sandbox_exec_argv.h"

#include <algorithm>
#include <set>

namespace vigil {

namespace {

bool valid_param_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

bool has_nul(std::string_view s) { return s.find('\0') != std::string_view::npos; }

}  // namespace

Result<std::vector<std::string>> profile_param_refs(std::string_view text) {
  // The builder writes every reference as exactly `(param "NAME")` (profile_builder.cc,
  // Writer::param), and no other text of ours contains `(param "`.
  constexpr std::string_view kOpen = "(param \"";
  std::vector<std::string> names;
  std::size_t at = 0;
  while ((at = text.find(kOpen, at)) != std::string_view::npos) {
    at += kOpen.size();
    const std::size_t end = text.find("\")", at);
    if (end == std::string_view::npos) {
      return make_error(Errc::kInternal,
                        "sandbox-exec: an unclosed (param \"...\") in the profile");
    }
    std::string name(text.substr(at, end - at));
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    at = end + 2;
  }
  return names;
}

Result<std::vector<std::string>> sandbox_exec_argv(const SeatbeltProfile& profile,
                                                   const std::vector<std::string>& command) {
  if (command.empty()) {
    return make_error(Errc::kInvalidPolicy, "sandbox-exec: nothing to run (empty command)");
  }
  if (command.front().empty()) {
    return make_error(Errc::kInvalidPolicy, "sandbox-exec: the command name is empty");
  }
  for (std::size_t i = 0; i < command.size(); ++i) {
    if (has_nul(command[i])) {
      return make_error(Errc::kInvalidPolicy, "sandbox-exec: command argument " +
                                                  std::to_string(i) +
                                                  " contains a NUL byte (argv cannot carry it)");
    }
  }
  if (profile.text.empty() || has_nul(profile.text)) {
    return make_error(Errc::kInternal, "sandbox-exec: the profile text is empty or contains NUL");
  }

  auto refs = profile_param_refs(profile.text);
  VIGIL_TRY(refs);
  const std::set<std::string> used(refs->begin(), refs->end());
  std::set<std::string> declared;
  for (const auto& p : profile.params) {
    if (!valid_param_name(p.name)) {
      return make_error(Errc::kInternal,
                        "sandbox-exec: parameter name \"" + p.name + "\" is not [A-Z0-9_]+");
    }
    if (!declared.insert(p.name).second) {
      return make_error(Errc::kInternal, "sandbox-exec: parameter " + p.name + " declared twice");
    }
    if (p.value.empty()) {
      return make_error(Errc::kInternal, "sandbox-exec: parameter " + p.name + " is empty");
    }
    if (has_nul(p.value)) {
      // Would be cut at the NUL: a shorter path, a wider rule.
      return make_error(Errc::kInternal,
                        "sandbox-exec: parameter " + p.name + " (" + p.origin + ") contains NUL");
    }
    if (used.count(p.name) == 0) {
      return make_error(Errc::kInternal,
                        "sandbox-exec: parameter " + p.name + " is declared but never used");
    }
  }
  for (const auto& name : *refs) {
    if (declared.count(name) == 0) {
      return make_error(Errc::kInternal, "sandbox-exec: the profile reads parameter \"" + name +
                                             "\", which has no value (no -D for it)");
    }
  }

  std::vector<std::string> argv{kSandboxExecPath, "-p", profile.text};
  for (const auto& p : profile.params) {
    argv.push_back("-D");
    std::string def = p.name;
    def += '=';
    def += p.value;
    argv.push_back(std::move(def));
  }
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());

  std::size_t bytes = sizeof(char*);  // the array's terminating null pointer
  for (const auto& a : argv) bytes += a.size() + 1 + sizeof(char*);
  if (bytes > kSandboxExecArgvBudget) {
    return make_error(Errc::kInvalidPolicy,
                      "sandbox-exec: the profile, its parameters and the command take " +
                          std::to_string(bytes) + " bytes of argv, over the " +
                          std::to_string(kSandboxExecArgvBudget) +
                          " vigil allows (macOS ARG_MAX is 1 MiB with the environment): "
                          "fewer or shorter paths in the settings file");
  }
  return argv;
}

}  // namespace vigil
