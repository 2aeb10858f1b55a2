#include "supervisor/cli/doctor_state.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <cstdio>

#include "supervisor/core/base/display_text.h"
#include "supervisor/core/base/unique_fd.h"
#include "supervisor/log/log_key.h"
#include "supervisor/log/state_size.h"

namespace vigil {
namespace {

// One row per part of the state: its name, what a count of it is, what it is for, and
// how to prune it (the command where there is one).
struct Row {
  const char* name;
  const char* unit;  // "logs", "sessions", "" for a file
  const char* what;
  const char* prune;
};

constexpr Row kRows[] = {
    {"sessions", "logs", "session logs, hash-chained and sealed (vigil replay reads them)",
     "vigil logs prune --older-than 30d (or set vigil.log.keep: the newest N stay)"},
    {"captures", "sessions",
     "pre-images of changed files, one store per session (vigil replay --diff, vigil undo)",
     "remove a session's directory once you will not undo it"},
    {"quarantine", "sessions",
     "what the post-run check moved out of a workspace (each manifest.jsonl says how to "
     "restore)",
     "review it, then remove a session's directory"},
    {"log.key", "", "the key that seals the logs (vigil replay --verify checks the seal)",
     "keep it: without it no log can be verified"},
};

// The entries directly in `dir` that count as one item of the part: *.jsonl for the
// logs, directories for the per-session stores.
std::uint64_t count_items(const std::string& dir, bool logs) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return 0;
  DIR* d = ::fdopendir(fd.get());
  if (d == nullptr) return 0;
  (void)fd.release();  // closedir owns it now
  std::uint64_t n = 0;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name = e->d_name;
    if (name == "." || name == "..") continue;
    if (logs) {
      n += name.ends_with(".jsonl");
    } else {
      struct stat st {};
      n += ::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
    }
  }
  ::closedir(d);
  return n;
}

}  // namespace

StateFacts gather_state(const char* xdg_state_home, const char* home) {
  StateFacts s;
  auto dir = vigil_state_dir(xdg_state_home, home);
  if (!dir) {
    s.error = dir.error().message;
    return s;
  }
  s.dir = *dir;
  for (const Row& r : kRows) {
    StatePart p;
    p.name = r.name;
    const std::string path = s.dir + "/" + r.name;
    struct stat st {};
    p.exists = ::lstat(path.c_str(), &st) == 0;
    if (p.exists && S_ISDIR(st.st_mode)) {
      // The same bounded, link-free walk as the capture caps and `vigil logs` use.
      const TreeSize t = tree_size(path);
      p.bytes = t.bytes;
      p.partial = t.cut;
      p.items = count_items(path, std::string_view(r.unit) == "logs");
    } else if (p.exists) {
      p.bytes = static_cast<std::uint64_t>(st.st_size);
      p.items = 1;
    }
    s.parts.push_back(std::move(p));
  }
  return s;
}

std::string human_bytes(std::uint64_t n) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  if (n < 1024) return std::to_string(n) + " B";
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[u]);
  return buf;
}

std::string render_state(const StateFacts& s) {
  if (s.dir.empty()) return "state: none kept here (" + escape_text(s.error) + ")\n";
  std::string out = "state: " + escape_text(s.dir) + " (what vigil keeps between runs)\n";
  for (std::size_t i = 0; i < s.parts.size() && i < std::size(kRows); ++i) {
    const StatePart& p = s.parts[i];
    const Row& r = kRows[i];
    std::string size = !p.exists ? std::string("none yet")
                       : *r.unit == '\0'
                           ? human_bytes(p.bytes)
                           : std::to_string(p.items) + " " + r.unit + ", " + human_bytes(p.bytes);
    if (p.partial) size = "at least " + size;
    char buf[256];
    // display-safe: a row's literal name and a size built from numbers
    std::snprintf(buf, sizeof buf, "  %-11s %-24s ", r.name, size.c_str());
    out += std::string(buf) + r.what + "\n";
    if (p.exists) out += std::string("              prune: ") + r.prune + "\n";
  }
  return out;
}

nlohmann::ordered_json state_json(const StateFacts& s) {
  nlohmann::ordered_json j = {{"dir", s.dir}};
  if (!s.error.empty()) j["error"] = s.error;
  j["parts"] = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < s.parts.size() && i < std::size(kRows); ++i) {
    const StatePart& p = s.parts[i];
    j["parts"].push_back({{"name", p.name},
                          {"exists", p.exists},
                          {"items", p.items},
                          {"bytes", p.bytes},
                          {"partial", p.partial},
                          {"what", kRows[i].what},
                          {"prune", kRows[i].prune}});
  }
  return j;
}

}  // namespace vigil
