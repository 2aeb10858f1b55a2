#include "supervisor/log/log_retention.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <limits>

#include "supervisor/core/events/event_schema.h"
#include "supervisor/log/session_log.h"
#include "supervisor/log/state_size.h"

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

bool is_log_file_name(std::string_view name) {
  return name.size() > 6 && name.ends_with(".jsonl") && name[0] != '.';
}

Result<std::uint64_t> parse_log_age(std::string_view text) {
  struct Unit {
    char suffix;
    std::uint64_t seconds;
  };
  static constexpr std::array<Unit, 5> kUnits = {
      {{'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}, {'w', 7 * 86400}}};
  const auto bad = [&](std::string_view why) {
    return make_error(Errc::kInvalidPolicy, "--older-than " + std::string(text) + ": " +
                                                std::string(why) +
                                                "; give a whole number and a unit (s, m, h, d "
                                                "or w), e.g. 7d or 12h");
  };
  if (text.empty()) return bad("empty");
  const auto unit = std::find_if(kUnits.begin(), kUnits.end(),
                                 [&](const Unit& u) { return u.suffix == text.back(); });
  if (unit == kUnits.end()) return bad("no unit");
  const std::string_view digits = text.substr(0, text.size() - 1);
  if (digits.empty() || digits.size() > 12 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return bad("not a whole number");
  }
  std::uint64_t n = 0;
  for (const char c : digits) n = n * 10 + static_cast<std::uint64_t>(c - '0');
  if (n == 0) return bad("must be more than zero");
  if (n > std::numeric_limits<std::uint64_t>::max() / unit->seconds) return bad("too large");
  return n * unit->seconds;
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

std::vector<LogEntry> logs_older_than(std::vector<LogEntry> entries, std::int64_t now,
                                      std::uint64_t age) {
  // A log is aged by its last write, not the start its name says: a long agent session
  // started a week ago and still writing is not old.
  std::erase_if(entries, [&](const LogEntry& e) {
    if (!is_log_file_name(e.name)) return true;
    if (e.mtime >= now) return true;
    return static_cast<std::uint64_t>(now - e.mtime) <= age;
  });
  std::sort(entries.begin(), entries.end(), [](const LogEntry& a, const LogEntry& b) {
    return a.mtime != b.mtime ? a.mtime < b.mtime : a.name < b.name;
  });
  return entries;
}

Result<LogDir> LogDir::open(const std::string& path) {
  LogDir d;
  d.path_ = path;
  d.fd_ = UniqueFd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!d.fd_) {
    const int err = errno;
    if (err == ENOENT) return make_error(Errc::kNotFound, path + " does not exist");
    if (err == ENOTDIR || err == ELOOP) {
      return make_error(Errc::kRefused,
                        path + " is not a directory (a symlink?); refusing to prune it");
    }
    return make_error(Errc::kSystem, "cannot open " + path + ": " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(d.fd_.get(), &st) != 0) return system_error("cannot stat " + path);
  VIGIL_TRY_VOID(judge_log_dir(path, st, ::geteuid(), "prune it"));
  return d;
}

Result<std::vector<LogEntry>> LogDir::logs() const {
  const int listing = ::dup(fd_.get());  // fdopendir owns it; closedir closes it
  if (listing < 0) return system_error("cannot list " + path_);
  DIR* d = ::fdopendir(listing);
  if (d == nullptr) {
    UniqueFd drop(listing);
    return system_error("cannot list " + path_);
  }
  ::rewinddir(d);  // the dup shares its offset with fd_: start from the top every time
  std::vector<LogEntry> out;
  const uid_t me = ::geteuid();
  while (const dirent* e = ::readdir(d)) {
    if (!is_log_file_name(e->d_name)) continue;
    struct stat st {};
    if (::fstatat(fd_.get(), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISREG(st.st_mode) || st.st_uid != me) continue;
    out.push_back({e->d_name, static_cast<std::int64_t>(st.st_mtime),
                   static_cast<std::uint64_t>(st.st_size)});
  }
  ::closedir(d);
  return out;
}

bool LogDir::written_by_vigil(const std::string& name) const {
  return session_of(name).has_value();
}

std::optional<std::string> LogDir::session_of(const std::string& name) const {
  UniqueFd fd(::openat(fd_.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd) return std::nullopt;
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid())
    return std::nullopt;
  // Reserved (created before session.start is written) but never written: only under a
  // name vigil gives, since nothing else in an empty file says whose it is.
  if (st.st_size == 0) {
    if (!is_session_log_name(name)) return std::nullopt;
    return name.substr(0, name.size() - 6);  // "<id>.jsonl"
  }
  // session.start is the first record, well under the longest line a log may hold.
  std::string head(events::Limits::log().max_line + 1, '\0');
  std::size_t got = 0;
  while (got < head.size()) {
    const ssize_t n = ::read(fd.get(), head.data() + got, head.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
    if (head.find('\n') < got) break;
  }
  head.resize(got);
  const auto nl = head.find('\n');
  if (nl == std::string::npos) return std::nullopt;
  const auto first = events::parse_log_record(std::string_view(head).substr(0, nl));
  if (!first || first->kind() != events::Kind::kSessionStart) return std::nullopt;
  return first->session;
}

std::string capture_root_beside(const std::string& sessions_dir) {
  const auto slash = sessions_dir.rfind('/');
  return (slash == std::string::npos || slash == 0 ? std::string() : sessions_dir.substr(0, slash)) +
         "/captures";
}

Result<void> LogDir::remove(const std::string& name) const {
  // The directory is ours alone (open() checked): nothing can swap `name` for a directory
  // or a symlink between the listing and here, and unlinkat never follows one anyway.
  if (::unlinkat(fd_.get(), name.c_str(), 0) != 0)
    return system_error("cannot remove " + path_ + "/" + name);
  return {};
}

std::size_t prune_logs(const std::string& dir, std::uint64_t keep, std::string_view current,
                       std::size_t* failed) {
  auto d = LogDir::open(dir);
  if (!d) return 0;
  auto logs = d->logs();
  if (!logs) return 0;
  std::vector<std::string> names;
  names.reserve(logs->size());
  for (auto& e : *logs) names.push_back(std::move(e.name));
  std::size_t removed = 0;
  const std::string captures = capture_root_beside(dir);
  for (const auto& n : logs_to_prune(std::move(names), keep, current)) {
    const auto id = d->session_of(n);
    if (!id) continue;
    if (d->remove(n)) {
      ++removed;
      // The log's change capture goes with it: undo needs both, and nothing else does.
      if (auto r = remove_capture_store(captures, *id); !r && failed != nullptr) ++*failed;
    } else if (failed != nullptr) {
      ++*failed;
    }
  }
  return removed;
}

}  // namespace vigil
