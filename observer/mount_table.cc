#include "observer/mount_table.h"

#include <fcntl.h>
#include <unistd.h>

#include <sstream>

#include "supervisor/core/policy/path_expand.h"
#include "supervisor/core/base/unique_fd.h"

namespace vigil::init {
namespace {

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && s.size() - i >= 4) {
      const char a = s[i + 1], b = s[i + 2], c = s[i + 3];
      if (a >= '0' && a <= '7' && b >= '0' && b <= '7' && c >= '0' && c <= '7') {
        out += static_cast<char>((a - '0') * 64 + (b - '0') * 8 + (c - '0'));
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

std::vector<std::string_view> split(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    const size_t start = i;
    while (i < s.size() && s[i] != ' ') ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

bool has_option(std::string_view opts, std::string_view opt) {
  size_t i = 0;
  while (i <= opts.size()) {
    const size_t comma = opts.find(',', i);
    if (opts.substr(i, comma - i) == opt) return true;
    if (comma == std::string_view::npos) break;
    i = comma + 1;
  }
  return false;
}

}  // namespace

Result<std::vector<Mount>> parse_mountinfo(std::string_view text) {
  std::vector<Mount> out;
  size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    const std::string_view line = text.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++line_no;
    if (line.empty()) continue;
    // id parent major:minor root mount_point mount_options [optional...] - fstype source
    // super_options
    const auto f = split(line);
    size_t dash = 0;
    for (size_t i = 6; i < f.size(); ++i) {
      if (f[i] == "-") {
        dash = i;
        break;
      }
    }
    if (f.size() < 10 || dash == 0 || dash + 3 > f.size()) {
      return make_error(Errc::kInternal,
                        "mountinfo line " + std::to_string(line_no) + " is malformed");
    }
    Mount m;
    m.dev = std::string(f[2]);
    m.root = unescape(f[3]);
    m.mount_point = unescape(f[4]);
    m.read_only = has_option(f[5], "ro");
    m.fstype = std::string(f[dash + 1]);
    m.source = unescape(f[dash + 2]);
    out.push_back(std::move(m));
  }
  return out;
}

Result<std::vector<Mount>> load_mount_table() {
  UniqueFd fd(::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC));
  if (!fd) return system_error("open /proc/self/mountinfo");
  std::string text;
  char buf[8192];
  ssize_t n;
  while ((n = ::read(fd.get(), buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  if (n < 0) return system_error("read /proc/self/mountinfo");
  return parse_mountinfo(text);
}

Classified classify_write(const std::vector<Mount>& mounts, std::string_view raw) {
  const std::string path = lexically_normal(raw);
  const Mount* hit = nullptr;
  for (const auto& m : mounts) {
    if (path_is_under(path, m.mount_point)) hit = &m;  // later mounts stack on earlier ones
  }
  if (hit == nullptr) return {WriteVerdict::kAllowed, "no mount covers the path", ""};
  // A file-sized mount of /dev/null (devtmpfs or bwrap's tmpfs /dev) over exactly this
  // path is how a protected or hidden file is capped.
  if (hit->mount_point == path && path != "/dev/null" &&
      (hit->root == "/null" || hit->root == "/dev/null")) {
    return {WriteVerdict::kDenied, "protected file (masked by /dev/null)", hit->mount_point};
  }
  if (hit->read_only) {
    return {WriteVerdict::kDenied,
            hit->mount_point == "/" ? "read-only: outside the writable roots"
                                    : "read-only: a protected path inside a writable root",
            hit->mount_point};
  }
  const bool dev = path_is_under(hit->mount_point, "/dev");
  if (hit->fstype == "tmpfs" && hit->root == "/" && !dev) {
    return {WriteVerdict::kEphemeral, "inside a denyRead directory: lands on a throwaway tmpfs",
            hit->mount_point};
  }
  return {WriteVerdict::kAllowed, "on a writable mount", hit->mount_point};
}

}  // namespace vigil::init
