#include "supervisor/launch/git_safe_env.h"

#include <charconv>
#include <cstdlib>

namespace vigil {

std::vector<std::pair<std::string, std::string>> git_safe_directory_env(
    const std::vector<std::string>& dirs, const std::optional<std::string>& inherited_count) {
  if (dirs.empty()) return {};
  unsigned long n = 0;
  if (inherited_count) {
    const char* b = inherited_count->data();
    const char* e = b + inherited_count->size();
    unsigned long v = 0;
    auto [p, ec] = std::from_chars(b, e, v);
    if (ec == std::errc() && p == e && v < 1000) n = v;
  }
  std::vector<std::pair<std::string, std::string>> out;
  auto emit = [&](const std::string& value) {
    out.emplace_back("GIT_CONFIG_KEY_" + std::to_string(n), "safe.directory");
    out.emplace_back("GIT_CONFIG_VALUE_" + std::to_string(n), value);
    ++n;
  };
  for (const auto& d : dirs) {
    emit(d);
    // "/" stays "/" ("" would reset git's list); its glob is "/*", not "//*".
    emit(d == "/" ? "/*" : d + "/*");
  }
  out.emplace_back("GIT_CONFIG_COUNT", std::to_string(n));
  return out;
}

std::optional<std::string> env_value(const std::optional<std::vector<std::string>>& env,
                                     const std::string& name) {
  if (!env) {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  }
  const std::string prefix = name + "=";
  std::optional<std::string> found;
  for (const auto& kv : *env) {
    if (kv.compare(0, prefix.size(), prefix) == 0) found = kv.substr(prefix.size());
  }
  return found;
}

std::vector<std::string> git_safe_directory_lines(const std::vector<std::string>& dirs) {
  if (dirs.empty()) return {};
  std::string list;
  for (const auto& d : dirs) list += (list.empty() ? "" : ", ") + d;
  return {
      "git: safe.directory (git.safeDirectories), each directory and any repository "
      "below it: " +
      list +
      "; passed as GIT_CONFIG_COUNT/GIT_CONFIG_KEY_n/GIT_CONFIG_VALUE_n after the "
      "command's own entries; it grants no write"};
}

}  // namespace vigil
