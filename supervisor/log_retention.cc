#include "supervisor/log_retention.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>

#include "supervisor/core/unique_fd.h"

namespace vigil {

bool is_session_log_name(std::string_view name) {
  // 8 digits, 'T', 6 digits, 'Z', '-', 1+ lower-case hex digits, ".jsonl"
  constexpr std::string_view kExt = ".jsonl";
  if (!name.ends_with(kExt)) return false;
  name.remove_suffix(kExt.size());
  if (name.size() < 18) return false;
  for (std::size_t i = 0; i < 15; ++i) {
    const bool digit = std::isdigit(static_cast<unsigned char>(name[i])) != 0;
    if (i == 8 ? name[i] != 'T' : !digit) return false;
  }
  if (name[15] != 'Z' || name[16] != '-') return false;
  return std::all_of(name.begin() + 17, name.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::vector<std::string> logs_to_prune(std::vector<std::string> names, std::uint64_t keep,
                                       std::string_view current) {
  std::erase_if(names, [](const std::string& n) { return !is_session_log_name(n); });
  std::sort(names.begin(), names.end(), std::greater<>());  // newest first
  // The current log is one of the `keep` whatever its name says (two sessions started in
  // the same second sort by their random part, not by age).
  std::vector<std::string> out;
  std::uint64_t kept = std::find(names.begin(), names.end(), current) != names.end() ? 1 : 0;
  for (auto& n : names) {
    if (n == current) continue;
    if (kept < keep) {
      ++kept;
      continue;
    }
    out.push_back(std::move(n));
  }
  return out;
}

std::size_t prune_logs(const std::string& dir, std::uint64_t keep, std::string_view current,
                       std::size_t* failed) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return 0;
  const int listing = ::dup(fd.get());  // fdopendir owns it; closedir closes it
  if (listing < 0) return 0;
  DIR* d = ::fdopendir(listing);
  if (d == nullptr) {
    UniqueFd drop(listing);
    return 0;
  }
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(d)) {
    if (e->d_type == DT_REG || e->d_type == DT_UNKNOWN) names.emplace_back(e->d_name);
  }
  ::closedir(d);
  std::size_t removed = 0;
  for (const auto& n : logs_to_prune(std::move(names), keep, current)) {
    if (::unlinkat(fd.get(), n.c_str(), 0) == 0) {
      ++removed;
    } else if (failed != nullptr) {
      ++*failed;
    }
  }
  return removed;
}

}  // namespace vigil
