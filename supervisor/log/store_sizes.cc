#include "supervisor/log/store_sizes.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <charconv>
#include <random>

#include "supervisor/core/base/unique_fd.h"
#include "supervisor/core/base/write_all.h"

namespace vigil {
namespace {

bool store_name(std::string_view n) {
  if (n.empty() || n == "." || n == ".." || n.size() > 255) return false;
  for (const char c : n) {
    if (c == '/' || c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\0') return false;
  }
  return true;
}

template <typename T>
bool number(std::string_view s, T* out) {
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

}  // namespace

std::string format_store_sizes(const StoreSizes& sizes) {
  std::string text = "v1\n";
  for (const auto& [name, s] : sizes) {
    if (!store_name(name)) continue;
    text += name + ' ' + std::to_string(s.dev) + ' ' + std::to_string(s.ino) + ' ' +
            std::to_string(s.mtime_ns) + ' ' + std::to_string(s.bytes) + '\n';
  }
  return text;
}

StoreSizes parse_store_sizes(std::string_view text) {
  StoreSizes out;
  if (!text.starts_with("v1\n")) return out;
  text.remove_prefix(3);
  while (!text.empty()) {
    const auto nl = text.find('\n');
    if (nl == std::string_view::npos) break;  // a line cut short: not trusted
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl + 1);
    std::string_view f[5];
    std::size_t i = 0;
    for (; i < 5 && !line.empty(); ++i) {
      const auto sp = line.find(' ');
      f[i] = line.substr(0, sp);
      line = sp == std::string_view::npos ? std::string_view() : line.substr(sp + 1);
    }
    StoreSize s;
    if (i != 5 || !line.empty() || !store_name(f[0]) || !number(f[1], &s.dev) ||
        !number(f[2], &s.ino) || !number(f[3], &s.mtime_ns) || !number(f[4], &s.bytes))
      continue;
    out[std::string(f[0])] = s;
  }
  return out;
}

StoreSizes load_store_sizes(int root_fd) {
  UniqueFd fd(::openat(root_fd, std::string(kStoreSizesFile).c_str(),
                       O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (!fd) return {};
  std::string text;
  char buf[65536];
  ssize_t n;
  while (text.size() <= kMaxStoreSizesBytes && (n = ::read(fd.get(), buf, sizeof buf)) > 0)
    text.append(buf, static_cast<std::size_t>(n));
  if (text.size() > kMaxStoreSizesBytes) return {};
  return parse_store_sizes(text);
}

Result<void> save_store_sizes(int root_fd, const StoreSizes& sizes) {
  std::random_device rd;
  const std::string tmp = std::string(kStoreSizesFile) + ".tmp" + std::to_string(rd());
  UniqueFd fd(::openat(root_fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return system_error("cannot write the capture stores' sizes");
  if (auto w = write_all(fd.get(), format_store_sizes(sizes), "the capture stores' sizes"); !w) {
    ::unlinkat(root_fd, tmp.c_str(), 0);
    return w;
  }
  if (::renameat(root_fd, tmp.c_str(), root_fd, std::string(kStoreSizesFile).c_str()) != 0) {
    ::unlinkat(root_fd, tmp.c_str(), 0);
    return system_error("cannot write the capture stores' sizes");
  }
  return {};
}

}  // namespace vigil
